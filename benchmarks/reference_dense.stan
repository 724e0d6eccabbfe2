// The reference formulation of the hierarchical model, as its authors wrote it (Corani et al.
// 2017; the same program ships with baycomp): every dataset's n scores enter through the
// inverse of the n x n correlation matrix and one quadratic form per dataset, and the
// intermediate quantities are transformed parameters, so Stan writes them (the q x n matrix
// diff among them) with every draw. Kept here only to benchmark bayescomp's
// sufficient-statistics program against it on the same data; bench_hierarchical.py also
// runs a lean copy with those quantities kept local.
data {
  real deltaLow;
  real deltaHi;
  real std0Low;
  real std0Hi;
  real stdLow;
  real stdHi;
  int<lower=2> Nsamples;
  int<lower=1> q;
  matrix[q, Nsamples] x;
  real rho;
  real upperAlpha;
  real lowerAlpha;
  real upperBeta;
  real lowerBeta;
}
transformed data {
  matrix[Nsamples, Nsamples] invM;
  real detM = (1 + (Nsamples - 1) * rho) * (1 - rho)^(Nsamples - 1);
  for (j in 1:Nsamples) {
    for (i in 1:Nsamples) {
      if (j == i)
        invM[j, i] = (1 + (Nsamples - 2) * rho) * pow(1 - rho, Nsamples - 2);
      else
        invM[j, i] = -rho * pow(1 - rho, Nsamples - 2);
    }
  }
  invM = invM / detM;
}
parameters {
  real<lower=deltaLow, upper=deltaHi> delta0;
  real<lower=std0Low, upper=std0Hi> std0;
  vector[q] delta;
  vector<lower=stdLow, upper=stdHi>[q] sigma;
  real<lower=0> nuMinusOne;
  real<lower=lowerAlpha, upper=upperAlpha> gammaAlpha;
  real<lower=lowerBeta, upper=upperBeta> gammaBeta;
}
transformed parameters {
  real<lower=1> nu = nuMinusOne + 1;
  matrix[q, Nsamples] diff = x - rep_matrix(delta, Nsamples);
  vector[q] diagQuad = diagonal(quad_form(invM, diff'));
  vector[q] oneOverSigma2 = rep_vector(1, q) ./ sigma ./ sigma;
  vector[q] logDetSigma = 2 * Nsamples * log(sigma) + log(detM);
  vector[q] logLik = -0.5 * logDetSigma - 0.5 * Nsamples * log(6.283)
                     - 0.5 * oneOverSigma2 .* diagQuad;
}
model {
  nuMinusOne ~ gamma(gammaAlpha, gammaBeta);
  delta ~ student_t(nu, delta0, std0);
  target += sum(logLik);
}
