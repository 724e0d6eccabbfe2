// A joint hierarchical model of K algorithms on N datasets: the model of Corani, Benavoli,
// Demsar, Mangili & Zaffalon (2017, Machine Learning 106) for all K algorithms at once,
// sampled with every dataset's fold noise, every delta_i and delta0 integrated out. The same
// model written plainly (every parameter sampled, each Sigma_i too) is
// stan/joint_reference.stan; tests/test_joint.py compares this program's log density with
// scipy and its K = 2 probabilities with bc.hierarchical, tests/test_joint_reference.py its
// posterior with the plain program's where that one samples cleanly.
//
// Coordinates. The K scores of a split, y in R^K, enter through z = G'y in R^d, d = K - 1,
// G = sqrt(2) H with H (K x d) an orthonormal (Helmert) basis of the sum-zero subspace
// (bayescomp.models.joint_program.contrast_basis). The difference of algorithms a and b is
// (e_a - e_b)' G z / 2; at K = 2, z = y_1 - y_2 is the paper's difference. Permuting the
// algorithms or choosing another basis changes z by an orthogonal d x d matrix R, and every
// prior below is invariant under z -> R z, so no result depends on the order of
// the algorithms or on a reference algorithm. The caller samples it in the principal
// directions of the population covariance as the data suggest it
// (bayescomp.models.joint_program.sampling_rotation): the same posterior, in coordinates
// where a near-identical pair's narrow direction is a coordinate of the Bartlett factor.
//
// Model (dataset i = 1..N, its n_i splits z_ij, on the unit scale of
// bayescomp.models.joint_program.prepare):
//   z_i1..z_in   ~ MVN(delta_i, Sigma_i), Cov(z_ij, z_ik) = rho_i Sigma_i (j != k)
//   p(Sigma_i)   ∝ |Sigma_i|^(1/2 - d) exp(-(n_i - 1) floor_i^2 tr(Sigma_i^-1) / 2)   (see 2)
//   delta_i      ~ MVt(nu, delta0, Sigma0)               (d.o.f., location, scale matrix)
//   Sigma0       = sigma0^2 Omega0,  Omega0 = d W / tr(W),  W ~ Wishart(d + 1, I)
//   sigma0       ~ U(0, sigma0_bar)
//   delta0       ~ flat on R^d
//   nu - 1       ~ Gamma(alpha, beta),  alpha ~ U(alpha_lower, alpha_upper), beta ~ U(...)
// At K = 2 (d = 1) this is the paper's model: Omega0 = 1, p(sigma_i^2) ∝ 1 / sigma_i
// (sigma_i uniform) with a soft floor (2), and two departures where the posterior lies far
// inside: the paper's sigma_i < sigma_bar is gone, and its delta0, uniform on (-bound, bound)
// with the bound the largest difference, is flat here.
//
// Devices, each with where it is exact:
// 1. Sufficient statistics and Sigma_i integrated out. With m_i the mean of the z_ij and
//    S_i their scatter matrix, the likelihood is |Sigma_i|^(-n_i/2)
//    exp(-tr(Sigma_i^-1 [(m_i - delta_i)(m_i - delta_i)' / a_i + S_i / b_i]) / 2), a_i =
//    rho_i + (1 - rho_i) / n_i, b_i = 1 - rho_i. Under the prior of Sigma_i above this is an
//    inverse-Wishart integral: m_i | delta_i ~ MVt(n_i - 2, delta_i, Psi_i), Psi_i =
//    a_i S'_i / (b_i (n_i - 2)), S'_i = S_i + (n_i - 1) b_i floor_i^2 I. Exact (a constant
//    in delta_i dropped); it needs n_i >= 3. The caller passes Psi_i (noise_scale). Why the
//    power 1/2 - d: given delta_i, Sigma_i's posterior is then inverse-Wishart with
//    n_i + d - 2 degrees of freedom, so the noise variance of any one contrast c'Sigma_i c
//    is inverse-Wishart with n_i - 1, as at K = 2 (the pairwise model), and each contrast's
//    mean is Student-t with n_i - 2: a dataset says as much about a pair whatever other
//    algorithms are compared. (Under |Sigma_i|^(-d/2) it was n_i - 1 - d: on bbtcomp's
//    4-fold scores, lr, ridge and lda made every dataset's noise a Cauchy, and a fourth
//    algorithm could not be added; benchmarks/results/joint.md.)
// 2. The floor. floor_i = the scores' resolution / sqrt(12) (as stan/hierarchical.stan's
//    device 7). The factor exp(-(n_i - 1) floor_i^2 tr(Sigma_i^-1) / 2) of the prior is what
//    S'_i adds to S_i: a soft floor (no Sigma_i direction much below floor_i^2), where the
//    pairwise program cuts sigma_i at floor_i and at sigma_bar. Without it, identical or
//    constant contrasts (S_i singular) make the posterior improper. It moves the noise
//    scale of a direction by (n_i - 1) floor_i^2 / (the scatter's eigenvalue there).
// 3. Scale mixtures. The likelihood's MVt is m_i ~ N(delta_i, Psi_i / kappa_i), kappa_i ~
//    Gamma(nu_i' / 2, rate nu_i' / 2), nu_i' = n_i - 2; the population's is delta_i ~
//    N(delta0, Sigma0 / lambda_i), lambda_i ~ Gamma(nu / 2, rate nu / 2). Exact.
// 4. delta_i and delta0 integrated out: given kappa_i and lambda_i, m_i ~ N(delta0, T_i),
//    T_i = Psi_i / kappa_i + Sigma0 / lambda_i, and with delta0 flat, the integral
//    over delta0 is closed form; delta0's conditional is N(centre, (sum T_i^-1)^-1), drawn
//    in generated quantities; the caller draws delta_i from its normal conditional. Exact.
// 5. log(kappa_i) and log(lambda_ik) as z-scores of their priors: log(lambda) = c(nu) +
//    s(nu) z with c and s the mean and standard deviation of log(lambda) under
//    Gamma(nu / 2, nu / 2) (Stirling's series above nu / 2 = 10, as stan/hierarchical.stan's
//    device 6; the function log_gamma_moments of stan/scale_mixture.stanfunctions); the log density adds
//    log(s), the Jacobian. Exact whatever c and s are.
// 6. The prior of log(nu - 1) with alpha and beta integrated out, tabulated by the caller
//    (bayescomp.models.nu_prior) and interpolated as stan/hierarchical.stan's device 8 (the
//    function tabulated of stan/scale_mixture.stanfunctions).
// 7. W by its Bartlett factor A (lower triangular, A_kk^2 ~ chi^2(d + 2 - k), A_kl ~ N(0, 1)
//    below the diagonal): W = A A' ~ Wishart(d + 1, I), an orthogonally invariant law, so
//    Omega0's is too; B = sigma0 sqrt(d / tr(W)) A is Sigma0's Cholesky factor. Exact. The
//    scale of A cancels in Omega0; it is sampled from its prior.
functions {
#include scale_mixture.stanfunctions
}
data {
  int<lower=1> n_datasets;                       // N
  int<lower=1> d;                                // K - 1
  array[n_datasets] vector[d] mean_contrast;     // m_i
  array[n_datasets] matrix[d, d] noise_scale;    // Psi_i (device 1)
  vector<lower=0>[n_datasets] noise_dof;         // n_i - 2
  real<lower=0> sigma0_upper;                    // sigma0_bar
  real nu_prior_start;                           // the prior of log(nu - 1) (device 6)
  real<lower=0> nu_prior_step;
  int<lower=2> nu_prior_size;
  vector[nu_prior_size] nu_prior_log_density;
  vector[nu_prior_size] nu_prior_slope;
}
transformed data {
  // log(kappa_i)'s prior moments (device 5)
  vector[n_datasets] kappa_centre;
  vector[n_datasets] kappa_scale;
  real kappa_constant = 0;
  matrix[d, d] identity = diag_matrix(rep_vector(1, d));
  vector[d] bartlett_dof;                        // d + 2 - k (device 7)
  for (k in 1:d) {
    bartlett_dof[k] = d + 2 - k;
  }
  for (i in 1:n_datasets) {
    vector[3] moments = log_gamma_moments(0.5 * noise_dof[i]);
    kappa_centre[i] = moments[1];
    kappa_scale[i] = moments[2];
    kappa_constant += moments[3] + log(moments[2]);
  }
}
parameters {
  real<lower=0, upper=sigma0_upper> sigma0;
  // the Bartlett factor A of W (device 7): Stan's Cholesky-factor type, whose diagonal is
  // positive (sampled as its log) and whose upper triangle is 0
  cholesky_factor_cov[d] shape;
  real log_nu_minus_one;
  vector[n_datasets] kappa_z;                    // z-scores of log(kappa_i) (device 5)
  vector[n_datasets] lambda_z;                   // z-scores of log(lambda_i)
}
transformed parameters {
  real nu = 1 + exp(log_nu_minus_one);
  // Sigma0's Cholesky factor. The program builds no matrix element by element: Stan (stanc
  // --O1) then keeps every d x d matrix below as one reverse-mode node (struct of arrays)
  // instead of d^2, which took each leapfrog step to 0.49-0.69x its cost on bbtcomp's 10
  // algorithms (benchmarks/results/joint.md)
  matrix[d, d] B = (sigma0 * sqrt(d / dot_self(to_vector(shape)))) * shape;
  vector[n_datasets] log_kappa = kappa_centre + kappa_scale .* kappa_z;
  vector[n_datasets] log_lambda;
  real mixing_density = kappa_constant
    - 0.5 * dot_product(noise_dof, expm1(log_kappa) - log_kappa);   // devices 3, 5
  vector[d] delta0_centre;
  matrix[d, d] delta0_precision;
  real marginal;                                 // log p(m | the rest), device 4
  {
    // symmetric to the bit (the product's two triangles may round apart, and far out in a
    // warm-up the Cholesky factorisation below rejected T_i as asymmetric)
    matrix[d, d] product = tcrossprod(B);
    matrix[d, d] population_covariance = 0.5 * (product + product');
    // log(lambda_i) as z-scores of its prior (device 5)
    vector[3] prior = log_gamma_moments(0.5 * nu);
    log_lambda = prior[1] + prior[2] * lambda_z;
    mixing_density += n_datasets * (prior[3] + log(prior[2]))
                      - 0.5 * nu * sum(expm1(log_lambda) - log_lambda);
    matrix[d, d] precision = rep_matrix(0, d, d);
    vector[d] weighted = rep_vector(0, d);
    real quadratic = 0;
    real log_det = 0;
    for (i in 1:n_datasets) {
      matrix[d, d] T = exp(-log_kappa[i]) * noise_scale[i]
                       + exp(-log_lambda[i]) * population_covariance;
      matrix[d, d] L = cholesky_decompose(T);
      // T_i^-1 by a solve that Stan keeps as one node (the inverse of L and its cross
      // product were d^2 nodes each). T_i is factorised twice, here and in the solve:
      // inverse_spd is d^2 nodes (2.5-2.8x a step), and log_determinant_spd(T) in place of L
      // was no cheaper (1.00-1.19x; joint.md)
      matrix[d, d] P = mdivide_left_spd(T, identity);
      vector[d] Pm = P * mean_contrast[i];
      precision += P;
      weighted += Pm;
      quadratic += dot_product(mean_contrast[i], Pm);
      log_det += 2 * sum(log(diagonal(L)));
    }
    delta0_precision = 0.5 * (precision + precision');
    delta0_centre = mdivide_left_spd(delta0_precision, weighted);
    marginal = -0.5 * (log_det + log_determinant_spd(delta0_precision)
                       + quadratic - dot_product(weighted, delta0_centre));
  }
}
model {
  // sigma0 uniform: a constant inside its bounds
  // W = A A' ~ Wishart(d + 1, I) by its Bartlett factor: A_kk^2 ~ chi^2(d + 2 - k),
  // A_kl ~ N(0, 1) (device 7)
  target += dot_product(bartlett_dof - 1, log(diagonal(shape)))
            - 0.5 * dot_self(to_vector(shape));
  target += tabulated(log_nu_minus_one, nu_prior_start, nu_prior_step,
                      nu_prior_log_density, nu_prior_slope);             // device 6
  target += mixing_density + marginal;
}
generated quantities {
  // delta0 ~ N(centre, precision^-1): centre + L^-T e with L L' the precision
  vector[d] delta0 = delta0_centre
    + mdivide_right_tri_low(to_row_vector(normal_rng(rep_vector(0, d), 1)),
                            cholesky_decompose(delta0_precision))';
}
