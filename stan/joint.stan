// A joint hierarchical model of K algorithms on N datasets: the model of Corani, Benavoli,
// Demsar, Mangili & Zaffalon (2017, Machine Learning 106) for all K algorithms at once, with
// every dataset's fold noise integrated out in closed form. The same model written plainly
// (every parameter sampled, each Sigma_i too) is stan/joint_reference.stan;
// tests/test_joint.py compares this program's log density with scipy and its K = 2
// probabilities with bc.hierarchical.
//
// Coordinates. The K scores of a split, y in R^K, enter through z = G'y in R^d, d = K - 1,
// G = sqrt(2) H with H (K x d) an orthonormal (Helmert) basis of the sum-zero subspace
// (bayescomp.models.joint_program.contrast_basis). The difference of algorithms a and b is
// (e_a - e_b)' G z / 2; at K = 2, z = y_1 - y_2 is the paper's difference. Permuting the
// algorithms or choosing another basis changes z by an orthogonal d x d matrix R, and every
// prior below is invariant under z -> R z, so no result depends on the order of the
// algorithms or on a reference algorithm.
//
// Model (dataset i = 1..N, its n_i splits z_ij, on the unit scale of
// bayescomp.models.joint_program.prepare):
//   z_i1..z_in   ~ MVN(delta_i, Sigma_i), Cov(z_ij, z_ik) = rho_i Sigma_i (j != k)
//   p(Sigma_i)   ∝ |Sigma_i|^(-d/2) exp(-(n_i - 1) floor_i^2 tr(Sigma_i^-1) / 2)   (see 2)
//   delta_i      ~ MVt(nu, delta0, Sigma0)               (d.o.f., location, scale matrix)
//   Sigma0       = sigma0^2 Omega0,  Omega0 = d W / tr(W),  W ~ Wishart(d + 1, I)
//   sigma0       ~ U(0, sigma0_bar)
//   delta0       ~ uniform on the ball |delta0| <= delta0_bound
//   nu - 1       ~ Gamma(alpha, beta),  alpha ~ U(alpha_lower, alpha_upper), beta ~ U(...)
// At K = 2 (d = 1) this is the paper's model: Omega0 = 1, the ball is (-bound, bound), and
// p(sigma_i^2) ∝ sigma_i^-1, i.e. sigma_i uniform, with a soft floor (2).
//
// Devices, each with where it is exact:
// 1. Sufficient statistics and Sigma_i integrated out. With m_i the mean of the z_ij and
//    S_i their scatter matrix, the likelihood is |Sigma_i|^(-n_i/2)
//    exp(-tr(Sigma_i^-1 [(m_i - delta_i)(m_i - delta_i)' / a_i + S_i / b_i]) / 2), a_i =
//    rho_i + (1 - rho_i) / n_i, b_i = 1 - rho_i. Under the prior of Sigma_i above this is an
//    inverse-Wishart integral: m_i | delta_i ~ MVt(n_i - 1 - d, delta_i, Psi_i), Psi_i =
//    a_i S'_i / (b_i (n_i - 1 - d)), S'_i = S_i + (n_i - 1) b_i floor_i^2 I. Exact (a
//    constant in delta_i dropped); it needs n_i > K. The caller passes the Cholesky factor
//    of Psi_i (noise_chol) and n_i - 1 - d (noise_dof).
// 2. The floor. floor_i = the scores' resolution / sqrt(12) (as stan/hierarchical.stan's
//    device 7). The factor exp(-(n_i - 1) floor_i^2 tr(Sigma_i^-1) / 2) of the prior is what
//    S'_i adds to S_i: a soft floor (no Sigma_i direction much below floor_i^2), where the
//    pairwise program cuts sigma_i at floor_i and at sigma_bar. Without it, identical or
//    constant contrasts (S_i singular) make the posterior improper. Its size: it moves the
//    noise scale of a dataset by (n_i - 1) floor_i^2 / (the scatter's eigenvalue), below
//    1e-4 relative on the tutorial's 10x10 CV accuracies except on contrasts that are
//    (nearly) constant, where it is the only information there is.
// 3. Centred on the data. delta_i = m_i + L_i w_i with L_i the Cholesky factor of Psi_i:
//    a linear change of variable (constant Jacobian), so that the likelihood of w_i is a
//    standard MVt and the sampler's diagonal metric fits every dataset.
// 4. W by its Bartlett factor A (lower triangular, A_kk^2 ~ chi^2(d + 2 - k), A_kl ~ N(0, 1)
//    below the diagonal): W = A A' ~ Wishart(d + 1, I). Exact. The scale of A cancels in
//    Omega0; it is sampled from its prior.
// 5. The prior of log(nu - 1) with alpha and beta integrated out, tabulated by the caller
//    (bayescomp.models.nu_prior) and interpolated as stan/hierarchical.stan's device 8 (the
//    function tabulated is that program's, copied).
functions {
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
  int<lower=1> n_datasets;                       // N
  int<lower=1> d;                                // K - 1
  array[n_datasets] vector[d] mean_contrast;     // m_i
  array[n_datasets] matrix[d, d] noise_chol;     // Cholesky factor of Psi_i (device 1)
  vector<lower=0>[n_datasets] noise_dof;         // n_i - 1 - d
  real<lower=0> delta0_bound;
  real<lower=0> sigma0_upper;                    // sigma0_bar
  real nu_prior_start;                           // the prior of log(nu - 1) (device 5)
  real<lower=0> nu_prior_step;
  int<lower=2> nu_prior_size;
  vector[nu_prior_size] nu_prior_log_density;
  vector[nu_prior_size] nu_prior_slope;
}
transformed data {
  int n_lower = (d * (d - 1)) %/% 2;
  vector[d] bartlett_dof;                        // d + 2 - k (device 4)
  for (k in 1:d) {
    bartlett_dof[k] = d + 2 - k;
  }
}
parameters {
  vector[d] delta0;
  real<lower=0, upper=sigma0_upper> sigma0;
  vector<lower=0>[d] shape_diagonal;             // A_kk (device 4)
  vector[n_lower] shape_lower;                   // A_kl, k > l
  real log_nu_minus_one;
  array[n_datasets] vector[d] w;                 // device 3
}
transformed parameters {
  real nu = 1 + exp(log_nu_minus_one);
  matrix[d, d] population_chol;                  // Cholesky factor of Sigma0
  matrix[n_datasets, d] delta;                   // delta_i, row i
  {
    matrix[d, d] shape = diag_matrix(shape_diagonal);
    int position = 1;
    for (k in 2:d) {
      for (l in 1:(k - 1)) {
        shape[k, l] = shape_lower[position];
        position += 1;
      }
    }
    population_chol = (sigma0 * sqrt(d / sum(square(to_vector(shape))))) * shape;
  }
  for (i in 1:n_datasets) {
    delta[i] = (mean_contrast[i] + noise_chol[i] * w[i])';
  }
}
model {
  // delta0 uniform on its ball, sigma0 uniform: constants inside their bounds
  if (dot_self(delta0) > square(delta0_bound)) {
    target += negative_infinity();
  }
  target += tabulated(log_nu_minus_one, nu_prior_start, nu_prior_step, nu_prior_log_density,
                      nu_prior_slope);                                   // device 5
  // W = A A' ~ Wishart(d + 1, I) by its Bartlett factor (device 4)
  target += dot_product(bartlett_dof - 1, log(shape_diagonal))
            - 0.5 * dot_self(shape_diagonal) - 0.5 * dot_self(shape_lower);
  // delta_i ~ MVt(nu, delta0, Sigma0)
  {
    matrix[d, n_datasets] standardised
      = mdivide_left_tri_low(population_chol, delta' - rep_matrix(delta0, n_datasets));
    vector[n_datasets] distance2 = columns_dot_self(standardised)';
    target += n_datasets * (lgamma(0.5 * (nu + d)) - lgamma(0.5 * nu) - 0.5 * d * log(nu)
                            - sum(log(diagonal(population_chol))))
              - 0.5 * (nu + d) * sum(log1p(distance2 / nu));
  }
  // m_i | delta_i ~ MVt(n_i - 1 - d, delta_i, Psi_i): in w_i, a standard MVt (devices 1, 3)
  for (i in 1:n_datasets) {
    target += -0.5 * (noise_dof[i] + d) * log1p(dot_self(w[i]) / noise_dof[i]);
  }
}
