// The hierarchical model of Corani, Benavoli, Demsar, Mangili & Zaffalon (2017), "Statistical
// comparison of classifiers through Bayesian hierarchical modelling", Machine Learning 106,
// 1817-1837, written plainly: every parameter of the paper is a parameter here and every
// line of the model is one line of the paper. It is the reference against which the fast
// program (hierarchical.stan: the Student-t written as a scale mixture, delta0 and every
// delta_i integrated out, alpha and beta given nu afterwards) is tested; use that one for
// analyses.
//
// Paper (dataset i = 1..q, its n_i cross-validation differences x_i):
//   x_i             ~ MVN(1 delta_i, Sigma_i),  Sigma_i = sigma_i^2 ((1 - rho_i) I + rho_i 11')
//   delta_1..q      ~ t(delta0, sigma0, nu)      (Student-t: location, scale, d.o.f.)
//   sigma_1..q      ~ unif(0, sigma_bar)         (here unif(floor_i, sigma_bar), see below)
//   delta0          ~ unif(-delta0_bound, delta0_bound)
//   sigma0          ~ unif(0, sigma0_bar)
//   nu - 1          ~ Gamma(alpha, beta)         (shape, rate; as the authors' code has it)
//   alpha           ~ unif(alpha_lower, alpha_upper),  beta ~ unif(beta_lower, beta_upper)
//
// Two departures, neither changing the model where the paper's is proper:
// * x_i enters through its sufficient statistics (mean and sum of squared deviations), by
//   cs_normal_suff, which is exactly the multivariate normal density above (same value, not
//   a proportional one; tests/test_hierarchical.py and tests/test_reference_program.py check
//   it against scipy's multivariate normal on the raw differences).
// * sigma_i has a floor, floor_i = the scores' resolution / sqrt(12) (bayescomp.hierarchical):
//   with constant differences the paper's posterior is improper (sigma_i -> 0); elsewhere
//   the floor lies far below the data's spread.
// All values are on the unit scale chosen by bayescomp.hierarchical._prepare (the
// differences divided by their mean within-dataset standard deviation); the caller
// multiplies delta0, sigma0, delta, sigma and delta_next back.
functions {
#include compound_symmetry.stanfunctions
}
data {
  int<lower=1> n_datasets;                    // q
  array[n_datasets] int<lower=2> n_scores;    // n_i (runs x folds)
  vector<lower=0, upper=1>[n_datasets] rho;   // rho_i = n_test / (n_train + n_test), < 1
  vector[n_datasets] mean_diff;               // mean of x_i
  vector<lower=0>[n_datasets] ss;             // sum of (x_ij - mean of x_i)^2
  real<lower=0> delta0_bound;                 // delta0 ~ unif(-delta0_bound, delta0_bound)
  real<lower=0> sigma0_upper;                 // sigma0_bar
  vector<lower=0>[n_datasets] sigma_lower;    // floor_i
  real<lower=max(sigma_lower)> sigma_upper;   // sigma_bar
  real<lower=0> alpha_lower;                  // alpha ~ unif(alpha_lower, alpha_upper)
  real<lower=alpha_lower> alpha_upper;
  real<lower=0> beta_lower;                   // beta ~ unif(beta_lower, beta_upper)
  real<lower=beta_lower> beta_upper;
}
parameters {
  real<lower=-delta0_bound, upper=delta0_bound> delta0;
  real<lower=0, upper=sigma0_upper> sigma0;
  vector[n_datasets] delta;                   // centred: delta_i itself
  vector<lower=sigma_lower, upper=sigma_upper>[n_datasets] sigma;
  real<lower=0> nu_minus_one;
  real<lower=alpha_lower, upper=alpha_upper> alpha;
  real<lower=beta_lower, upper=beta_upper> beta;
}
model {
  // hyper-priors; the uniform statements add constants, written for the reader
  alpha ~ uniform(alpha_lower, alpha_upper);
  beta ~ uniform(beta_lower, beta_upper);
  nu_minus_one ~ gamma(alpha, beta);
  delta0 ~ uniform(-delta0_bound, delta0_bound);
  sigma0 ~ uniform(0, sigma0_upper);
  // delta_i ~ t(delta0, sigma0, nu)
  delta ~ student_t(1 + nu_minus_one, delta0, sigma0);
  // sigma_i ~ unif(floor_i, sigma_bar)
  sigma ~ uniform(sigma_lower, sigma_upper);
  // x_i ~ MVN(1 delta_i, sigma_i^2 ((1 - rho_i) I + rho_i 11')), on (mean, ss) of x_i
  mean_diff ~ cs_normal_suff(ss, n_scores, rho, delta, sigma);
}
generated quantities {
  real nu = 1 + nu_minus_one;
  // the mean difference on a new dataset of the same population
  real delta_next = student_t_rng(nu, delta0, sigma0);
}
