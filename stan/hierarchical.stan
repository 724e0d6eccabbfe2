// Hierarchical model of Corani, Benavoli, Demsar, Mangili & Zaffalon (2017, Machine Learning
// 106) for the differences of two algorithms on many datasets, with delta0 and every
// delta_i integrated out.
// stan/hierarchical_reference.stan is the same model written plainly; tests compare the two.
//
// Each dataset enters through its sufficient statistics: the mean m_i of its n_i differences
// is N(delta_i, sigma_i^2 v_i), v_i = rho_i + (1 - rho_i) / n_i, and the sum of squared
// deviations is sigma_i^2 (1 - rho_i) chi^2_(n_i - 1), independently. The Student-t
// population delta_i ~ t(nu, delta0, sigma0) is written as the scale mixture
// delta_i ~ N(delta0, sigma0^2 / lambda_i), lambda_i ~ Gamma(nu / 2, nu / 2), so delta_i
// integrates out in closed form: m_i ~ N(delta0, sigma_i^2 v_i + sigma0^2 / lambda_i).
// Given those variances, delta0 (uniform on (-B, B)) has a truncated normal posterior and
// integrates out too; it is drawn in generated quantities. The caller draws delta_i
// afterwards from its normal conditional, and alpha and beta given nu (their prior of nu
// arrives integrated, as a table: bayescomp.nu_prior).
//
// Why: with delta_i a parameter, a collection where sigma0's posterior reaches from 0 to
// past some datasets' standard errors (near-identical algorithms; identical or constant
// scores) puts those delta_i in a funnel whether they are centred or not; the sampler
// diverged or stalled on 14 of 37 benchmark collections. With delta0 a parameter, its
// spread shrinks with sigma0 until datasets with identical scores pin it (a funnel seen on
// 6 datasets, 2 identical: 142 divergences at small sigma0). Here nothing scales with sigma0.
// The sampler moves log(lambda_i) as a z-score: centred and scaled by the mean and standard
// deviation of an approximation to its conditional posterior (below), so that the z-scores
// keep their meaning whatever nu and sigma0 are. Standardised by the prior given nu instead
// (the raw log(lambda_i) forms a funnel with nu), the z-scores of outlying datasets had to
// move with nu and sigma0: on the package's example naive_bayes - logistic, whose posterior
// holds both a heavy-tailed population with 4 outliers (nu near 1) and a wide normal one
// (nu 20-60), the chains crossed between the two rarely (bulk ESS 163-330 of nu and sigma0
// in 4 x 1000 draws on seeds 1-8; 444-662 with this centring). The update is weighted by how
// far each dataset informs lambda_i: fully updated, it pulled the z-scores of datasets whose
// standard error swamps sigma0 (1,000 near-identical pairs: nu's bulk ESS 236; 483 standardised
// by the prior; 675 weighted).
// With population = 0 (the "gaussian" prior) lambda_i = 1 and there is no nu.
functions {
  // mean and standard deviation of log(lambda), lambda ~ Gamma(a, a), and the constant
  // a log(a) - a - lgamma(a) of its log density. Stirling's series where a is large: the
  // direct forms cancel terms of size a log(a) (at nu = 1e25, reached in a warm-up, into
  // noise of 1e10 that swamped nu's prior).
  vector log_gamma_moments(real a) {
    if (a > 10) {
      real inv = 1 / a;
      real inv2 = square(inv);
      return [-inv * (0.5 + inv * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 / 252))),
              sqrt(trigamma(a)),
              0.5 * log(a) - 0.5 * log(2 * pi())
                - inv * (1.0 / 12 - inv2 * (1.0 / 360 - inv2 / 1260))]';
    }
    return [digamma(a) - log(a), sqrt(trigamma(a)), a * log(a) - a - lgamma(a)]';
  }

  // log(lambda_i) from its z-score, under an approximation to lambda_i's conditional
  // posterior: the Gamma(nu / 2, nu / 2) prior updated by dataset i's deviation from the
  // median mean (offset2_i, squared) as by w_i observations, w_i = sigma0^2 / (sigma0^2 +
  // se_i^2) the share of the deviation's variance that comes from the population (0 when the
  // standard error swamps sigma0 and the data say nothing of lambda_i; 1 when delta_i is
  // known): Gamma(a, (nu + w_i r_i^2) / 2), a = (nu + w_i) / 2, r_i^2 = offset2_i / (sigma0^2 +
  // se_i^2). Its log has mean digamma(a) - log(a) - log1p(w_i (r_i^2 - 1) / (nu + w_i)) and
  // standard deviation sqrt(trigamma(a)); the terms in a are interpolated linearly in w_i
  // between a = nu / 2 (``prior``) and (nu + 1) / 2 (``updated``), both log_gamma_moments,
  // two evaluations in all rather than one per dataset. Any smooth centring and positive
  // scale is exact: they only change coordinates (the model adds log(scale), the Jacobian).
  vector informed_share(real sigma0, vector se2) {
    return square(sigma0) ./ (square(sigma0) + se2);
  }

  vector mixing_scale(vector prior, vector updated, vector informed) {
    return prior[2] + (updated[2] - prior[2]) * informed;
  }

  vector log_mixing(vector lambda_z, vector prior, vector updated, vector informed, real nu,
                    real sigma0, vector offset2, vector se2, vector scale) {
    return prior[1] + (updated[1] - prior[1]) * informed
           - log1p(informed .* (offset2 ./ (square(sigma0) + se2) - 1) ./ (nu + informed))
           + scale .* lambda_z;
  }

  // Given each mean's variance (as weights w_i = 1 / variance), delta0 ~ U(-bound, bound)
  // has the posterior N(centre, 1 / sum(w)) truncated to the bound: [centre, sd, log of the
  // integral of prod_i N(m_i | delta0, 1 / w_i) over delta0 in (-bound, bound), up to
  // constants].
  vector delta0_marginal(vector mean_diff, vector weight, real bound) {
    real precision = sum(weight);
    real centre = dot_product(weight, mean_diff) / precision;
    real sd = inv_sqrt(precision);
    real inside = log_diff_exp(normal_lcdf(bound | centre, sd), normal_lcdf(-bound | centre, sd));
    return [centre, sd,
            0.5 * (sum(log(weight)) - log(precision))
            - 0.5 * dot_product(weight, square(mean_diff - centre)) + inside]';
  }

  // A function tabulated with its derivative on a uniform grid, by cubic Hermite interpolation;
  // linear beyond the grid. The cell is found by bisection: a parameter cannot become an index.
  real tabulated(real u, real start, real step, vector value, vector slope) {
    int size = num_elements(value);
    real end = start + (size - 1) * step;
    if (u <= start) {
      return value[1] + slope[1] * (u - start);
    }
    if (u >= end) {
      return value[size] + slope[size] * (u - end);
    }
    int low = 1;
    int high = size;
    while (high - low > 1) {
      int middle = (low + high) %/% 2;
      if (u < start + (middle - 1) * step) {
        high = middle;
      } else {
        low = middle;
      }
    }
    real t = (u - (start + (low - 1) * step)) / step;
    real t2 = square(t);
    real t3 = t2 * t;
    return (2 * t3 - 3 * t2 + 1) * value[low] + (t3 - 2 * t2 + t) * step * slope[low]
           + (3 * t2 - 2 * t3) * value[high] + (t3 - t2) * step * slope[high];
  }
}
data {
  int<lower=1> n_datasets;
  array[n_datasets] int<lower=2> n_scores;
  vector<lower=0, upper=1>[n_datasets] rho;
  vector[n_datasets] mean_diff;
  vector<lower=0>[n_datasets] ss;
  real<lower=0> delta0_bound;               // delta0 ~ U(-bound, bound)
  real<lower=0> sigma0_upper;               // sigma0 ~ U(0, upper)
  vector<lower=0>[n_datasets] sigma_lower;  // > 0: keeps the posterior proper on constant data
  real<lower=max(sigma_lower)> sigma_upper; // sigma_i ~ U(lower_i, upper)
  int<lower=0, upper=1> population;         // 1: Student-t delta_i; 0: normal (no nu)
  // the prior of log(nu - 1), tabulated by the caller (bayescomp.nu_prior) as log density
  // and derivative on a grid
  real nu_prior_start;
  real<lower=0> nu_prior_step;
  int<lower=2> nu_prior_size;
  vector[nu_prior_size] nu_prior_log_density;
  vector[nu_prior_size] nu_prior_slope;
}
transformed data {
  for (i in 1:n_datasets) {
    if (rho[i] >= 1) {
      reject("rho must be < 1, got ", rho[i], " on dataset ", i);
    }
  }
  vector[n_datasets] exponent = to_vector(n_scores) - 1;
  vector[n_datasets] mean_share = rho + (1 - rho) ./ to_vector(n_scores);  // var(m_i) / sigma_i^2
  vector[n_datasets] ss_contrasts = ss ./ (1 - rho);
  int n_lambda = population ? n_datasets : 0;
  // for log_mixing: squared deviations from the median mean, squared standard errors of the
  // means (the fold variance held at least at the floor, as constant datasets need)
  vector[n_datasets] offset2;
  {
    vector[n_datasets] sorted = sort_asc(mean_diff);
    int half = n_datasets %/% 2;
    offset2 = square(mean_diff - (n_datasets % 2 == 1 ? sorted[half + 1]
                                                      : 0.5 * (sorted[half] + sorted[half + 1])));
  }
  vector[n_datasets] se2 = fmax(ss ./ (exponent .* (1 - rho)), square(sigma_lower)) .* mean_share;
}
parameters {
  real<lower=0, upper=sigma0_upper> sigma0;
  vector<lower=sigma_lower, upper=sigma_upper>[n_datasets] sigma;
  array[population] real log_nu_minus_one;
  vector[n_lambda] lambda_z;                // standardised log(lambda_i)
}
model {
  vector[n_datasets] population_variance = rep_vector(square(sigma0), n_datasets);
  if (population) {
    real nu = 1 + exp(log_nu_minus_one[1]);
    real half_nu = 0.5 * nu;
    vector[3] moments = log_gamma_moments(half_nu);
    vector[3] updated = log_gamma_moments(half_nu + 0.5);
    vector[n_datasets] informed = informed_share(sigma0, se2);
    vector[n_datasets] scale = mixing_scale(moments, updated, informed);
    vector[n_datasets] log_lambda = log_mixing(lambda_z, moments, updated, informed, nu, sigma0,
                                               offset2, se2, scale);
    target += tabulated(log_nu_minus_one[1], nu_prior_start, nu_prior_step,
                        nu_prior_log_density, nu_prior_slope);
    // log(lambda_i) ~ log-Gamma(nu / 2, nu / 2) with the Jacobian of lambda_z -> log(lambda_i);
    // exp(L) - 1 - L loses about 1e-16 |L| to rounding, negligible even times nu / 2 = 1e20
    target += n_datasets * moments[3] + sum(log(scale))
              - half_nu * sum(expm1(log_lambda) - log_lambda);
    population_variance = population_variance .* exp(-log_lambda);
  }
  vector[n_datasets] variance = square(sigma);
  // sum of squared deviations: sigma_i^2 (1 - rho_i) chi^2(n_i - 1), constants dropped
  target += -dot_product(exponent, log(sigma)) - 0.5 * sum(ss_contrasts ./ variance);
  target += delta0_marginal(mean_diff, inv(variance .* mean_share + population_variance),
                            delta0_bound)[3];
}
generated quantities {
  array[population] real nu;
  vector[n_lambda] log_lambda;              // for the caller's draws of delta_i
  real delta0;
  {
    vector[n_datasets] population_variance = rep_vector(square(sigma0), n_datasets);
    for (k in 1:population) {
      nu[k] = 1 + exp(log_nu_minus_one[k]);
      vector[3] prior = log_gamma_moments(0.5 * nu[k]);
      vector[3] updated = log_gamma_moments(0.5 * (nu[k] + 1));
      vector[n_datasets] informed = informed_share(sigma0, se2);
      log_lambda = log_mixing(lambda_z, prior, updated, informed, nu[k], sigma0, offset2, se2,
                              mixing_scale(prior, updated, informed));
      population_variance = population_variance .* exp(-log_lambda);
    }
    vector[3] posterior = delta0_marginal(mean_diff, inv(square(sigma) .* mean_share
                                                         + population_variance), delta0_bound);
    // the truncated normal by its inverse distribution function
    real low = Phi((-delta0_bound - posterior[1]) / posterior[2]);
    real high = Phi((delta0_bound - posterior[1]) / posterior[2]);
    delta0 = posterior[1] + posterior[2] * inv_Phi(uniform_rng(low, high));
  }
  // the mean difference on a new dataset drawn from the same population
  real delta_next;
  if (population) {
    delta_next = student_t_rng(nu[1], delta0, sigma0);
  } else {
    delta_next = normal_rng(delta0, sigma0);
  }
}
