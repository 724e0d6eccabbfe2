// The joint hierarchical model of K algorithms on N datasets (stan/joint.stan's header
// states it and its coordinates z = G'y, d = K - 1), written plainly: every parameter is a
// parameter here, each dataset's noise covariance Sigma_i too, and every line of the model
// is one line of it. It is the reference against which the fast program (Sigma_i, every
// delta_i and delta0 integrated out, alpha and beta integrated out of nu's prior) is to be
// checked; use that one for analyses. At K = 2 it is stan/hierarchical_reference.stan
// with a soft floor on sigma_i in place of its hard one, no upper bound on sigma_i and
// delta0 flat. tests/test_joint_reference.py compares the two programs' posteriors (nu,
// sigma0, every pair's delta0, population scale and ROPE probabilities, the delta_i of two
// datasets: means and sds within 4 Monte Carlo standard errors).
//
// Where it samples. Its centred delta_i, Sigma_i and sigma0 form funnels wherever the data
// leave them to the population: 3000 divergences on 3 algorithms x 6 datasets whose
// population spread is near 0 (benchmarks/results/joint.md). It samples cleanly (no
// divergence, R-hat <= 1.006, bulk ESS >= 2500 of 4 x 1500 draws) where the data pin
// every delta_i and Sigma_i: 40-50 splits per dataset, the means' noise standard error
// about a quarter of sigma0, 12-20 datasets; K = 3 and K = 4 at adapt_delta 0.95, a
// heavy-tailed population with an anisotropic covariance (one pair's spread 0.45 sigma0)
// at 0.99. There, at 0.95, 1 draw in 6000 diverged on 1 seed of 4, with tr(W) below its
// 1st percentile: W's scale is its prior's alone, and as it shrinks the off-diagonal of
// its Cholesky factor turns into a funnel. It is started at the data
// (bayescomp.models.reference.joint_reference_inits); Stan's default start also sampled
// cleanly on the one collection tried (3 algorithms x 12 datasets x 50 splits).
//
//   z_i1..z_in   ~ MVN(delta_i, Sigma_i), Cov(z_ij, z_ik) = rho_i Sigma_i (j != k)
//   p(Sigma_i)   ∝ |Sigma_i|^(1/2 - d) exp(-(n_i - 1) floor_i^2 tr(Sigma_i^-1) / 2)
//   delta_i      ~ MVt(nu, delta0, Sigma0)
//   Sigma0       = sigma0^2 d W / tr(W),  W ~ Wishart(d + 1, I)
//   sigma0       ~ U(0, sigma0_bar)
//   delta0       ~ flat on R^d
//   nu - 1       ~ Gamma(alpha, beta),  alpha ~ U(alpha_lower, alpha_upper),
//                  beta ~ U(beta_lower, beta_upper)
//
// The splits enter through their mean m_i and scatter matrix S_i: the multivariate normal
// density of the n_i splits with covariance ((1 - rho_i) I + rho_i 11') (x) Sigma_i is
// exactly N(m_i | delta_i, a_i Sigma_i) |2 pi b_i Sigma_i|^(-(n_i - 1)/2)
// exp(-tr((b_i Sigma_i)^-1 S_i) / 2), a_i = rho_i + (1 - rho_i) / n_i, b_i = 1 - rho_i
// (the eigen-decomposition of the compound-symmetric matrix: 11'/n and its complement).
functions {
  // log density of the n splits of one dataset, from their mean and scatter matrix
  real splits_lpdf(vector mean_contrast, matrix scatter, int n, real rho, vector delta,
                   matrix Sigma) {
    int d = num_elements(delta);
    real a = rho + (1 - rho) / n;
    real b = 1 - rho;
    return multi_normal_lpdf(mean_contrast | delta, a * Sigma)
           - 0.5 * (n - 1) * (d * log(2 * pi() * b) + log_determinant(Sigma))
           - 0.5 * trace(mdivide_left_spd(Sigma, scatter)) / b;
  }
}
data {
  int<lower=1> n_datasets;                       // N
  int<lower=1> d;                                // K - 1
  array[n_datasets] int<lower=2> n_scores;       // n_i
  vector<lower=0, upper=1>[n_datasets] rho;      // rho_i < 1
  array[n_datasets] vector[d] mean_contrast;     // m_i
  array[n_datasets] matrix[d, d] scatter;        // S_i
  vector<lower=0>[n_datasets] floor_sd;          // floor_i
  real<lower=0> sigma0_upper;
  real<lower=0> alpha_lower;
  real<lower=alpha_lower> alpha_upper;
  real<lower=0> beta_lower;
  real<lower=beta_lower> beta_upper;
}
transformed data {
  matrix[d, d] identity = diag_matrix(rep_vector(1, d));
}
parameters {
  vector[d] delta0;
  real<lower=0, upper=sigma0_upper> sigma0;
  cov_matrix[d] W;
  real<lower=0> nu_minus_one;
  real<lower=alpha_lower, upper=alpha_upper> alpha;
  real<lower=beta_lower, upper=beta_upper> beta;
  array[n_datasets] vector[d] delta;
  array[n_datasets] cov_matrix[d] Sigma;
}
transformed parameters {
  real nu = 1 + nu_minus_one;
  cov_matrix[d] Sigma0 = square(sigma0) * d / trace(W) * W;
}
model {
  alpha ~ uniform(alpha_lower, alpha_upper);
  beta ~ uniform(beta_lower, beta_upper);
  nu_minus_one ~ gamma(alpha, beta);
  sigma0 ~ uniform(0, sigma0_upper);
  // delta0 flat
  W ~ wishart(d + 1, identity);
  for (i in 1:n_datasets) {
    // p(Sigma_i) ∝ |Sigma_i|^(1/2 - d) exp(-(n_i - 1) floor_i^2 tr(Sigma_i^-1) / 2)
    target += (0.5 - d) * log_determinant(Sigma[i])
              - 0.5 * (n_scores[i] - 1) * square(floor_sd[i]) * trace(inverse_spd(Sigma[i]));
    delta[i] ~ multi_student_t(nu, delta0, Sigma0);
    mean_contrast[i] ~ splits(scatter[i], n_scores[i], rho[i], delta[i], Sigma[i]);
  }
}
