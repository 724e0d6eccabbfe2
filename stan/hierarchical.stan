// The hierarchical model of Corani, Benavoli, Demsar, Mangili & Zaffalon (2017), "Statistical
// comparison of classifiers through Bayesian hierarchical modelling", Machine Learning 106,
// 1817-1837, sampled with delta0 and every delta_i integrated out. The same model written
// plainly is stan/hierarchical_reference.stan; tests/test_reference_program.py compares the
// two, tests/test_likelihood.py this program's log density with scipy.
//
// Model (dataset i = 1..q, its n_i cross-validation differences x_i, on the unit scale of
// bayescomp.models.hierarchical_program.prepare):
//   x_i          ~ MVN(1 delta_i, sigma_i^2 ((1 - rho_i) I + rho_i 11'))
//   delta_i      ~ Student-t(nu, delta0, sigma0)        (d.o.f., location, scale)
//   sigma_i      ~ U(floor_i, sigma_bar)                (the paper: U(0, sigma_bar); see 7)
//   delta0       ~ U(-delta0_bound, delta0_bound)
//   sigma0       ~ U(0, sigma0_bar)
//   nu - 1       ~ Gamma(alpha, beta)                   (shape, rate)
//   alpha        ~ U(alpha_lower, alpha_upper),  beta ~ U(beta_lower, beta_upper)
// With population = 0 (the "gaussian" prior) delta_i ~ N(delta0, sigma0^2) and there is no nu.
//
// Sampled: sigma0's log-odds (device 11), u_i (sigma_i's log-odds, device 10), log(nu - 1)
// and z_i = lambda_z[i] (device 5); the program writes only these, sigma0, delta0's
// conditional and the draws below, and the caller computes sigma_i and log(lambda_i) from them
// (hierarchical_program.sampled_scales).
// Drawn afterwards from their exact conditionals: delta0 here (generated quantities);
// delta_i, alpha and beta by the caller (hierarchical_program.draw_delta,
// nu_prior.draw_alpha_beta). The devices, each with where it is exact and its error:
// 1. Sufficient statistics. x_i enters through its mean m_i ~ N(delta_i, sigma_i^2 v_i),
//    v_i = rho_i + (1 - rho_i) / n_i, and its sum of squared deviations ss_i ~ sigma_i^2
//    (1 - rho_i) chi^2(n_i - 1), independent: the multivariate normal's density factorises
//    so. Exact (constants dropped).
// 2. Scale mixture. delta_i ~ t(nu, delta0, sigma0) is delta_i ~ N(delta0, sigma0^2 / lambda_i)
//    with lambda_i ~ Gamma(nu / 2, rate nu / 2). Exact.
// 3. delta_i integrated out: m_i ~ N(delta0, T_i), T_i = sigma_i^2 v_i + sigma0^2 / lambda_i.
//    Exact (a normal convolution).
// 4. delta0 integrated out: given the T_i its posterior is N(centre, 1 / sum 1/T_i) truncated
//    to the bound, and the integral over delta0 is closed form (delta0_marginal). Exact; its
//    sum of squares is taken as two dot products, which round to about 1e-16 sum o_i^2 / T_i.
//    (Why 3 and 4: as parameters, delta_i and delta0 formed funnels with sigma0 on
//    near-identical and identical collections; benchmarks/results/stan_program.md.)
// 5. z-score coordinates. log(lambda_i) = c_i + s_i z_i, centred and scaled by an
//    approximation to its conditional posterior: lambda_i's Gamma(nu / 2, nu / 2) prior
//    updated by dataset i's squared deviation from the means' centre (offset2_i) as by w_i
//    observations, w_i = sigma0^2 / (sigma0^2 + se_i^2) the share of that deviation's
//    variance that comes from the population (se_i the standard error of m_i, its fold
//    variance held at least at the floor): Gamma(a, (nu + w_i r_i^2) / 2), a = (nu + w_i) / 2,
//    r_i^2 = offset2_i / (sigma0^2 + se_i^2). Its log has mean digamma(a) - log(a) -
//    log((nu + w_i r_i^2) / (nu + w_i)) and sd sqrt(trigamma(a)); the terms in a are linear
//    in w_i between a = nu / 2 and (nu + 1) / 2, two evaluations in all. Exact whatever c_i
//    and s_i are: they only change coordinates, and the log density adds log(s_i), the
//    Jacobian. (Why: standardised by the prior, the z-scores of outlying datasets had to move
//    with nu and sigma0, and chains crossed rarely between a heavy-tailed and a wide normal
//    population; benchmarks/results/stan_program.md keeps the history.) The centre stands in
//    for delta0: the means' median weighted by their precision (mean_centre, from the
//    caller), so that a dataset whose tiny standard error pins delta0 is centred at its own
//    mean (with the plain median, real near-identical pairs diverged; stan_program.md).
// 6. Stirling's series for a > 10 in log_gamma_moments (the direct forms cancel terms of size
//    a log(a): at nu = 1e25, reached in a warm-up, into noise of 1e10). Only the constant
//    a log(a) - a - lgamma(a) of log(lambda_i)'s density enters the log density (the other
//    two moments are coordinates, 5); its series stops before 1/(1680 a^7), which bounds the
//    error (the series alternates): at most 5.96e-11 per dataset at a = 10, falling as a^-7
//    (so the log density steps by at most 5.96e-11 q at nu = 20, where the forms switch).
//    The mean's series stops before 1/(240 a^8): at most 4.17e-11 (a coordinate).
// 7. Floors. sigma_i >= floor_i = the scores' resolution / sqrt(12) > 0, a change of the
//    paper's prior, not an approximation: with constant differences (ss_i = 0) the paper's
//    posterior is improper (sigma_i -> 0). Given delta_i and the rest, the paper's posterior
//    of sigma_i is S'_i / sigma_i^2 ~ chi^2(n_i - 1) restricted to sigma_i < sigma_bar, with
//    S'_i = S_i + (m_i - delta_i)^2 / v_i >= S_i = ss_i / (1 - rho_i); its mass below the floor
//    falls as S'_i grows, so it is at most P(chi^2(n_i - 1) > S_i / floor_i^2) /
//    P(chi^2(n_i - 1) > S_i / sigma_bar^2), and the floored posterior differs from the
//    paper's by at most the sum of these in total variation: below 1e-40 once S_i / floor_i^2
//    exceeds 100 n_i.
// 8. The prior of log(nu - 1) with alpha and beta integrated out (bayescomp.models.nu_prior:
//    beta in closed form, alpha by Gauss-Legendre quadrature, agreeing with dblquad to 1e-9),
//    tabulated every 0.05 from -40 with its derivative and interpolated by cubic Hermite
//    polynomials (tabulated). Exact at the nodes; between them the largest error against
//    nu_prior.log_density, on 20 points per cell, is 9.6e-7 where the prior is within e^-50 of
//    its peak and 1.0e-5 anywhere on the table (in the far upper tail, log density below
//    -570), for the paper's and baycomp's priors (tests/test_nu_prior.py). Beyond the table it is linear: below u = -40 (prior mass
//    4e-12) its error grows to 0.03 at u = -50; above the end the log density is below -600.
// 9. Rounding: exp(L) - 1 - L is taken as expm1(L) - L, which loses about 1e-16 |L|,
//    negligible even times nu / 2 = 1e20.
// 10. sigma_i's coordinates. u_i = logit((sigma_i - floor_i) / (sigma_bar - floor_i)), Stan's
//    coordinate for a bounded sigma_i, offset and scaled by the posterior that ss_i alone gives
//    sigma_i: its mode s_i = sqrt(S_i / (n_i - 1)) and log(sigma_i)'s sd 1 / sqrt(2 (n_i - 1)),
//    times d u_i / d log(sigma_i) at s_i (s_i held at most halfway up the interval, where
//    that derivative is steady). Where s_i <= 2 floor_i (near-constant differences)
//    sigma_i - floor_i is about exponential with mean floor_i / (n_i - 1): u_i is offset by the
//    log of that mean's share of the interval, scale 1. Exact: only coordinates (the log
//    density adds the Jacobian log((sigma_i - floor_i) (sigma_bar - sigma_i)), up to a
//    constant). (Why: under Stan's own log-odds the unit metric that warm-up starts from is
//    about 14 times too wide for u_i at n_i = 100, and the first iterations take tiny steps;
//    offset and scaled, warm-up takes 0.70-0.73x the time and a whole fit 0.85-0.87x at 54 and
//    400 datasets through cmdstanpy, 0.89x and 0.96x through the package's engine;
//    benchmarks/results/warmup.md.)
// 11. sigma0's coordinate. Its log-odds in (0, sigma0_bar), as Stan's own bounds would take
//    it, offset and scaled by the caller's estimate of where it is and how far it spreads
//    (hierarchical_density.sigma0_coordinates: the log-odds of the population's spread on a
//    grid, and twice the sd that the datasets' information about it gives, at most 1). Exact:
//    only a coordinate (the Jacobian adds log(sigma0 (sigma0_bar - sigma0)), up to a
//    constant). (Why: the posterior of sigma0's log-odds narrows as 1 / sqrt(q), to an sd
//    of 0.06 at 400 datasets, and under the unit metric that warm-up starts from, its first
//    100 iterations took steps of 0.05 and 63-127 leapfrog steps each, half the warm-up's;
//    benchmarks/results/warmup.md.)
functions {
#include scale_mixture.stanfunctions

  // Given each mean's variance T_i, delta0 ~ U(-bound, bound) has the posterior
  // N(centre, 1 / sum(1 / T)) truncated to the bound: [centre, sd, log of the integral of
  // prod_i N(m_i | delta0, T_i) over delta0 in (-bound, bound), up to constants]. The means
  // enter as deviations o_i = m_i - reference and their squares, so that the weighted sum of
  // squares sum (m_i - centre)^2 / T_i is two dot products, sum o_i^2 / T_i - precision
  // (centre - reference)^2, without a vector of residuals (cheaper by two operations per
  // dataset); its rounding error is about 1e-16 sum o_i^2 / T_i, small beside the sum as
  // long as the centre, a weighted mean of the means, is not far out among them.
  vector delta0_marginal(real reference, vector deviation, vector deviation2, vector variance,
                         real bound) {
    vector[num_elements(variance)] weight = inv(variance);
    real precision = sum(weight);
    real shift = dot_product(weight, deviation) / precision;   // centre - reference
    real centre = reference + shift;
    real sd = inv_sqrt(precision);
    real inside = log_diff_exp(normal_lcdf(bound | centre, sd), normal_lcdf(-bound | centre, sd));
    return [centre, sd,
            -0.5 * (sum(log(variance)) + log(precision))
            - 0.5 * (dot_product(weight, deviation2) - precision * square(shift)) + inside]';
  }

  // The log density's terms at the sampled parameters and delta0's conditional, for the model
  // block and, on the draws, the generated quantities (which write delta0_centre and delta0_sd
  // and draw delta0): [the log Jacobian of u_i and of sigma0's log-odds (devices 10, 11), the
  // z_i's log density given nu (devices
  // 2, 5, 6, 9; 0 for a normal population), ss_i given sigma_i (device 1), delta0_marginal's
  // centre, sd and log integral (devices 3, 4)]. The model adds the terms in this order. Kept
  // out of transformed parameters, which Stan writes with every draw: sigma_i and log(lambda_i)
  // were 108 of 233 columns at 54 datasets, and writing and reading them cost about a tenth of
  // a fit (benchmarks/results/stan_program.md); the caller computes the two from the draws
  // (bayescomp.models.hierarchical_density.sigma_given, log_lambda_given).
  vector log_density_terms(real sigma0_log_odds, vector sigma_log_odds,
                           array[] real log_nu_minus_one, vector lambda_z,
                           data real sigma0_upper, data vector sigma_lower,
                           data vector sigma_width,
                           data vector mean_share, data vector se2, data real mean_centre,
                           data vector deviation, data vector offset2, data real delta0_bound,
                           data vector exponent, data vector ss_contrasts) {
    int n_datasets = num_elements(sigma_log_odds);
    // the log Jacobian of u_i -> sigma_i (device 10), log(share) + log(1 - share) = u + 2 log(1 -
    // share), its constant sum(log(sigma_bar - floor_i)) dropped. (Where u_i > 36.7 the share
    // rounds to 1 and the log density to -infinity: sigma_i within 1e-16 of sigma_bar, a
    // posterior mass below 1e-16.)
    vector[n_datasets] share = inv_logit(sigma_log_odds);   // sigma_i's place in its interval
    vector[n_datasets] sigma = fma(sigma_width, share, sigma_lower);
    // and of sigma0's log-odds (device 11), its constant log(sigma0_bar) dropped
    real sigma0 = sigma0_upper * inv_logit(sigma0_log_odds);
    real sigma_jacobian = sum(sigma_log_odds) + 2 * sum(log1m(share))
                          + log_inv_logit(sigma0_log_odds) + log1m_inv_logit(sigma0_log_odds);
    real log_lambda_density = 0;              // log density of the z_i (devices 2, 5, 6, 9)
    real sigma0_sq = square(sigma0);
    vector[n_datasets] variance;              // T_i (device 3)
    if (size(log_nu_minus_one)) {
      real nu = 1 + exp(log_nu_minus_one[1]);
      vector[3] prior = log_gamma_moments(0.5 * nu);
      vector[3] updated = log_gamma_moments(0.5 * nu + 0.5);
      // sigma0^2 as a vector: stanc (--O1) then keeps total, w_i and s_i as one
      // reverse-mode node each (a struct of arrays) rather than one per dataset, which a
      // scalar broadcast against data made them (benchmarks/results/stan_program.md)
      vector[n_datasets] population = rep_vector(sigma0_sq, n_datasets);
      vector[n_datasets] total = population + se2;
      vector[n_datasets] informed = population ./ total;           // w_i
      // s_i and c_i of device 5, linear in w_i between the two evaluations; the log-ratio
      // log((nu + w_i r_i^2) / (nu + w_i)) with r_i^2 = offset2_i / total_i
      vector[n_datasets] scale = fma(updated[2] - prior[2], informed, prior[2]);
      vector[n_datasets] log_lambda = fma(scale, lambda_z,
                                          fma(updated[1] - prior[1], informed, prior[1])
                                          - log(fma(informed, offset2 ./ total, nu)
                                                ./ (nu + informed)));
      // log(lambda_i) ~ log-Gamma(nu / 2, nu / 2), and the Jacobian of z_i -> log(lambda_i)
      log_lambda_density = n_datasets * prior[3] + sum(log(scale))
                           - 0.5 * nu * (sum(expm1(log_lambda)) - sum(log_lambda));
      // T_i = sigma_i^2 v_i + sigma0^2 / lambda_i, the second term as one exp
      variance = fma(square(sigma), mean_share, exp(2 * log(sigma0) - log_lambda));
    } else {
      variance = fma(square(sigma), mean_share, sigma0_sq);
    }
    // ss_i: sigma_i^2 (1 - rho_i) chi^2(n_i - 1), constants dropped (device 1)
    real ss_density = -dot_product(exponent, log(sigma))
                      - 0.5 * dot_product(ss_contrasts, inv_square(sigma));
    return append_row([sigma_jacobian, log_lambda_density, ss_density]',
                      delta0_marginal(mean_centre, deviation, offset2, variance,
                                      delta0_bound));
  }
}
data {
  int<lower=1> n_datasets;                  // q
  array[n_datasets] int<lower=2> n_scores;  // n_i
  vector<lower=0, upper=1>[n_datasets] rho; // rho_i, < 1
  vector[n_datasets] mean_diff;             // m_i, the mean of x_i
  vector<lower=0>[n_datasets] ss;           // ss_i, its sum of squared deviations
  real<lower=0> delta0_bound;               // delta0 ~ U(-bound, bound)
  real<lower=0> sigma0_upper;               // sigma0_bar
  real sigma0_offset;                       // sigma0's coordinate (device 11)
  real<lower=0> sigma0_scale;
  vector<lower=0>[n_datasets] sigma_lower;  // floor_i (device 7)
  real<lower=max(sigma_lower)> sigma_upper; // sigma_bar
  int<lower=0, upper=1> population;         // 1: Student-t delta_i; 0: normal (no nu)
  // the means' centre: their median weighted by their precision under a normal population
  // (bayescomp.models.hierarchical_program.mean_centre), the point their deviations are
  // taken from (devices 4 and 5)
  real mean_centre;
  // the prior of log(nu - 1), tabulated by the caller (bayescomp.models.nu_prior) as log
  // density and derivative on a grid (device 8)
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
  vector[n_datasets] mean_share = rho + (1 - rho) ./ to_vector(n_scores);  // v_i
  vector[n_datasets] ss_contrasts = ss ./ (1 - rho);                       // S_i
  int n_lambda = population ? n_datasets : 0;
  // the means' deviations from their centre and the squares (for delta0_marginal and the
  // centring, device 5), and the squared standard errors of the means (the fold variance
  // held at least at the floor, as constant datasets need)
  vector[n_datasets] deviation = mean_diff - mean_centre;
  vector[n_datasets] offset2 = square(deviation);
  vector[n_datasets] se2 = fmax(ss ./ (exponent .* (1 - rho)), square(sigma_lower)) .* mean_share;
  // the offset and scale of u_i (device 10)
  vector[n_datasets] sigma_width = sigma_upper - sigma_lower;
  vector[n_datasets] sigma_offset;
  vector[n_datasets] sigma_scale;
  for (i in 1:n_datasets) {
    real spread = sqrt(ss_contrasts[i] / exponent[i]);
    if (spread > 2 * sigma_lower[i]) {
      real mode = fmin(spread, 0.5 * (sigma_lower[i] + sigma_upper));
      sigma_offset[i] = logit((mode - sigma_lower[i]) / sigma_width[i]);
      sigma_scale[i] = sigma_width[i] * mode
                       / ((mode - sigma_lower[i]) * (sigma_upper - mode) * sqrt(2 * exponent[i]));
    } else {
      sigma_offset[i] = logit(sigma_lower[i] / (exponent[i] * sigma_width[i]));
      sigma_scale[i] = 1;
    }
  }
}
parameters {
  real<offset=sigma0_offset, multiplier=sigma0_scale> sigma0_log_odds;   // device 11
  vector<offset=sigma_offset, multiplier=sigma_scale>[n_datasets] sigma_log_odds;  // u_i
  array[population] real log_nu_minus_one;
  vector[n_lambda] lambda_z;                // z_i, the z-score of log(lambda_i) (device 5)
}
model {
  vector[6] terms = log_density_terms(sigma0_log_odds, sigma_log_odds, log_nu_minus_one,
                                      lambda_z, sigma0_upper, sigma_lower, sigma_width,
                                      mean_share, se2, mean_centre, deviation, offset2,
                                      delta0_bound, exponent, ss_contrasts);
  // uniform priors of sigma0 and sigma_i: constants inside their bounds; the Jacobians
  target += terms[1];
  if (population) {
    target += tabulated(log_nu_minus_one[1], nu_prior_start, nu_prior_step,
                        nu_prior_log_density, nu_prior_slope);   // log(nu - 1), device 8
    target += terms[2];                                          // z_i given nu
  }
  target += terms[3];                                            // ss_i (device 1)
  // m_i with delta_i and delta0 integrated out (devices 3, 4)
  target += terms[6];
}
generated quantities {
  real sigma0 = sigma0_upper * inv_logit(sigma0_log_odds);
  // delta0's conditional given the rest, N(centre, sd^2) truncated to the bound (device 4),
  // which bayescomp.models.region_masses reads the population's probabilities from
  real delta0_centre;
  real delta0_sd;
  {
    vector[6] terms = log_density_terms(sigma0_log_odds, sigma_log_odds, log_nu_minus_one,
                                        lambda_z, sigma0_upper, sigma_lower, sigma_width,
                                        mean_share, se2, mean_centre, deviation, offset2,
                                        delta0_bound, exponent, ss_contrasts);
    delta0_centre = terms[4];
    delta0_sd = terms[5];
  }
  // delta0 from that conditional, by the inverse distribution function
  real delta0;
  {
    real low = Phi((-delta0_bound - delta0_centre) / delta0_sd);
    real high = Phi((delta0_bound - delta0_centre) / delta0_sd);
    delta0 = delta0_centre + delta0_sd * inv_Phi(uniform_rng(low, high));
  }
  // the mean difference on a new dataset drawn from the same population
  real delta_next;
  if (population) {
    delta_next = student_t_rng(1 + exp(log_nu_minus_one[1]), delta0, sigma0);
  } else {
    delta_next = normal_rng(delta0, sigma0);
  }
}
