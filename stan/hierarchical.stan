// Hierarchical model of Corani, Benavoli, Demsar, Mangili & Zaffalon (2017, Machine Learning
// 106) for the differences of two algorithms on many datasets, written on each dataset's
// sufficient statistics (n, rho, mean, sum of squared deviations) instead of the raw
// n x n covariance of the original code: same posterior, O(datasets) per gradient.
// The caller rescales the differences to unit order and passes the prior bounds.
//
// sigma_i is integrated out analytically wherever that is numerically safe (the caller
// says where, in sigma_sampled). With sigma_i ~ U(L, U) and A = S / (1 - rho)
// + n (m - delta)^2 / (1 + (n - 1) rho), the likelihood integrates to a constant times
//   A^(-a) [Q(a, A / 2U^2) - Q(a, A / 2L^2)],   a = (n - 1) / 2,
// Q the regularized upper incomplete gamma function. A^(-a) is, up to a constant, a Student-t
// density of the mean with n - 2 degrees of freedom, location delta and scale
// sqrt(S (1 + (n - 1) rho) / (n (1 - rho) (n - 2))). The bracket is the share of that
// integral inside (L, U); it differs from 1 by less than 1e-17 unless delta is far from the
// mean or the floor L is near the data's own spread, so it is only evaluated then. The sampler
// then moves in 3 + n_datasets dimensions instead of 5 + 2 n_datasets (alpha and beta are
// integrated out of the prior of nu too), with no funnel between delta_i and sigma_i; the
// caller draws sigma_i, alpha and beta from their exact conditionals afterwards.
functions {
#include compound_symmetry.stanfunctions

  // log Q(a, x), Q the regularized upper incomplete gamma function. Far in the upper tail
  // (delta_i far from its dataset's mean, as at a random initial value) Q underflows; there
  // Legendre's continued fraction is evaluated with log(Q) taken analytically.
  real log_gamma_q(real a, real x) {
    real q = gamma_q(a, x);
    if (q > 1e-250) {
      return log(q);
    }
    real tiny = 1e-300;
    real b = x + 1 - a;
    real c = 1 / tiny;
    real d = 1 / b;
    real h = d;
    int i = 1;
    real step = 0;
    while (i < 500 && abs(step - 1) > 1e-15) {
      real an = -i * (i - a);
      b += 2;
      d = an * d + b;
      d = 1 / (abs(d) < tiny ? tiny : d);
      c = b + an / c;
      c = abs(c) < tiny ? tiny : c;
      step = d * c;
      h *= step;
      i += 1;
    }
    return -x + a * log(x) - lgamma(a) + log(h);
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

  // log of the share of the sigma-integral that lies inside (sigma_low, sigma_high)
  real sigma_bounds_share(real shape, real quad, real sigma_low, real sigma_high,
                          int lower_matters) {
    real log_upper_tail = log_gamma_q(shape, quad / (2 * square(sigma_high)));
    if (lower_matters) {
      return log_diff_exp(log_upper_tail, log_gamma_q(shape, quad / (2 * square(sigma_low))));
    }
    return log_upper_tail;
  }
}
data {
  int<lower=1> n_datasets;
  array[n_datasets] int<lower=2> n_scores;
  vector<lower=0, upper=1>[n_datasets] rho;
  vector[n_datasets] mean_diff;
  vector<lower=0>[n_datasets] ss;
  real<lower=0> delta0_bound;               // delta0 ~ U(-bound, bound)
  // delta0 is sampled as delta0_z, its logit-scale value shifted and scaled by the caller's
  // guess of where the posterior lies and how wide it is. On Stan's own logit scale delta0
  // is some 40 times narrower than the other parameters, and the first adaptation window
  // (unit metric) then spent a third of the warm-up's leapfrog steps.
  real delta0_logit_center;
  real<lower=0> delta0_logit_scale;
  // With centred delta_i, delta0 given the delta_i lies near their mean: its logit also
  // moves by slope x (mean(delta_param) - delta0_guess), so that delta0_z is its deviation
  // from that mean, nearly independent of the delta_i. The map from (delta0_z, delta_param)
  // to (delta0, delta_param) is triangular: its Jacobian is d delta0 / d delta0_z alone.
  // This raised the ESS of delta0 per leapfrog step by 30%. Zero when non-centred.
  real delta0_logit_slope;
  real delta0_guess;
  real<lower=0> sigma0_upper;               // sigma0 ~ U(0, upper)
  vector<lower=0>[n_datasets] sigma_lower;  // > 0: keeps the posterior proper on constant data
  real<lower=max(sigma_lower)> sigma_upper; // sigma_i ~ U(lower_i, upper)
  // nu - 1 ~ Gamma(alpha, beta), alpha and beta uniform: the prior of log(nu - 1) with alpha
  // and beta integrated out, tabulated by the caller (bayescomp.nu_prior) as log density and
  // derivative on a grid. The caller draws alpha and beta given nu afterwards.
  real nu_prior_start;
  real<lower=0> nu_prior_step;
  int<lower=2> nu_prior_size;
  vector[nu_prior_size] nu_prior_log_density;
  vector[nu_prior_size] nu_prior_slope;
  // Per dataset: centred delta_i mixes best where the data pin delta_i down relative to its
  // prior scale sigma0; non-centred (delta_i = delta0 + sigma0 z_i) avoids the funnel of a
  // small sigma0 where they do not. A collection mixes both: identical scores pin their
  // dataset's delta_i far more tightly than noisy folds pin the others'.
  array[n_datasets] int<lower=0, upper=1> centered;
  // 1 where sigma_i stays a parameter: 2 scores, constant differences, or a floor near the
  // data's spread, where the integrated form would lose its precision
  array[n_datasets] int<lower=0, upper=1> sigma_sampled;
}
transformed data {
  int n_centered = sum(centered);
  array[n_centered] int centered_index;
  array[n_datasets - n_centered] int noncentered_index;
  {
    int c = 1;
    int u = 1;
    for (i in 1:n_datasets) {
      if (centered[i]) {
        centered_index[c] = i;
        c += 1;
      } else {
        noncentered_index[u] = i;
        u += 1;
      }
    }
  }
  if (delta0_logit_slope != 0 && n_centered < n_datasets) {
    reject("delta0_logit_slope must be 0 unless every dataset is centred");
  }
  int n_sampled = sum(sigma_sampled);
  int n_integrated = n_datasets - n_sampled;
  array[n_sampled] int sampled;
  array[n_integrated] int integrated;
  // Student-t form of the integrated likelihood, and the interval of delta_i outside which
  // the share of the sigma-integral inside the bounds must be computed
  vector[n_integrated] t_df;
  vector[n_integrated] t_scale;
  vector[n_integrated] shape;
  vector[n_integrated] weight;
  vector[n_integrated] ss_contrasts;
  vector[n_integrated] exact_below;
  vector[n_integrated] exact_above;
  array[n_integrated] int lower_matters;
  vector[n_integrated] mean_integrated;
  {
    int s = 1;
    int t = 1;
    for (i in 1:n_datasets) {
      if (rho[i] >= 1) {
        reject("rho must be < 1, got ", rho[i], " on dataset ", i);
      }
      if (sigma_sampled[i]) {
        sampled[s] = i;
        s += 1;
      } else {
        if (n_scores[i] < 3 || ss[i] <= 0) {
          reject("sigma_i cannot be integrated out on dataset ", i, " (n = ", n_scores[i],
                 ", ss = ", ss[i], ")");
        }
        integrated[t] = i;
        t += 1;
      }
    }
  }
  for (j in 1:n_integrated) {
    int i = integrated[j];
    real tolerance = 1e-17;
    mean_integrated[j] = mean_diff[i];
    shape[j] = 0.5 * (n_scores[i] - 1);
    weight[j] = n_scores[i] / (1 + (n_scores[i] - 1) * rho[i]);
    ss_contrasts[j] = ss[i] / (1 - rho[i]);
    t_df[j] = n_scores[i] - 2;
    t_scale[j] = sqrt(ss_contrasts[j] / (weight[j] * t_df[j]));
    // P(a, x) <= x^a / Gamma(a + 1): below this x the upper bound changes nothing
    real x_safe = exp((log(tolerance) + lgamma(shape[j] + 1)) / shape[j]);
    real room = 2 * square(sigma_upper) * x_safe - ss_contrasts[j];
    real band = room > 0 ? sqrt(room / weight[j]) : 0;
    exact_below[j] = mean_diff[i] - band;
    exact_above[j] = mean_diff[i] + band;
    // Q(a, x) falls with x and A >= ss_contrasts: the largest the floor's term can be
    lower_matters[j] = gamma_q(shape[j], ss_contrasts[j] / (2 * square(sigma_lower[i])))
                       > tolerance;
  }
  // one test on the extremes of delta stands in for the test per dataset while every delta_i
  // lies inside every band, as it does after the first iterations: 10% of a leapfrog step
  real delta_safe_low = max(exact_below);
  real delta_safe_high = min(exact_above);
  int any_lower_matters = max(append_array({0}, lower_matters));
}
parameters {
  real delta0_z;
  real<lower=0, upper=sigma0_upper> sigma0;
  vector[n_datasets] delta_param;
  vector<lower=sigma_lower[sampled], upper=sigma_upper>[n_sampled] sigma_param;
  real log_nu_minus_one;
}
transformed parameters {
  real delta0_logit = delta0_logit_center + delta0_logit_scale * delta0_z;
  if (delta0_logit_slope != 0) {
    delta0_logit += delta0_logit_slope * (mean(delta_param) - delta0_guess);
  }
  real delta0 = delta0_bound * (2 * inv_logit(delta0_logit) - 1);
  real<lower=1> nu = 1 + exp(log_nu_minus_one);
}
model {
  // delta is rebuilt from delta_param by the caller: storing it would double the output
  // that every draw ships from Stan to Python
  vector[n_datasets] delta = delta_param;
  if (n_centered < n_datasets) {
    delta[noncentered_index] = delta0 + sigma0 * delta_param[noncentered_index];
  }
  // delta0 ~ U(-bound, bound): the log Jacobian of delta0_z -> delta0, constants dropped
  target += log_inv_logit(delta0_logit) + log1m_inv_logit(delta0_logit);
  target += tabulated(log_nu_minus_one, nu_prior_start, nu_prior_step, nu_prior_log_density,
                     nu_prior_slope);
  if (n_centered == n_datasets) {
    delta_param ~ student_t(nu, delta0, sigma0);
  } else if (n_centered == 0) {
    delta_param ~ student_t(nu, 0, 1);
  } else {
    delta_param[centered_index] ~ student_t(nu, delta0, sigma0);
    delta_param[noncentered_index] ~ student_t(nu, 0, 1);
  }
  // indexing copies: skipped in the usual case of every sigma_i integrated out
  if (n_sampled == 0) {
    mean_diff ~ student_t(t_df, delta, t_scale);
  } else {
    mean_integrated ~ student_t(t_df, delta[integrated], t_scale);
    mean_diff[sampled] ~ cs_normal_suff(ss[sampled], n_scores[sampled], rho[sampled],
                                        delta[sampled], sigma_param);
  }
  if (any_lower_matters || max(delta) > delta_safe_high || min(delta) < delta_safe_low) {
    for (j in 1:n_integrated) {
      int i = integrated[j];
      if (lower_matters[j] || delta[i] < exact_below[j] || delta[i] > exact_above[j]) {
        target += sigma_bounds_share(shape[j], ss_contrasts[j] + weight[j]
                                     * square(mean_diff[i] - delta[i]),
                                     sigma_lower[i], sigma_upper, lower_matters[j]);
      }
    }
  }
}
generated quantities {
  // the mean difference on a new dataset drawn from the same population
  real delta_next = student_t_rng(nu, delta0, sigma0);
}
