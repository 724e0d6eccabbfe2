// The baseline of benchmarks/bench_ranking.py: stan/plackett_luce.stan as it was before the
// likelihood of a tied ranking was summed exactly over the subsets of each group. Here the
// caller lists the strict orders consistent with the ties (or a random sample of 720 of them
// when there are more) and the program averages their Plackett-Luce probabilities.
//
// Bayesian Plackett-Luce model of the algorithms' rankings on many datasets (Calvo, Ceberio &
// Lozano 2018; Calvo et al. 2019): algorithm k has worth w_k, the worths form a simplex with
// a Dirichlet prior, and a ranking (best first) has probability
//   prod_{j < K} w_{o_j} / (w_{o_j} + ... + w_{o_K}).
//
// Ties: a dataset on which some algorithms tie is a coarsened ranking, consistent with
// several strict orders (every order of each tied group). Its likelihood is the mean of the
// Plackett-Luce probabilities of those orders (the caller lists them, or a random sample of
// them when there are too many); the mean differs from the probability of the coarsened
// event, their sum, by a constant, so the posterior is the same. A dataset without ties has
// one order and the plain Plackett-Luce likelihood.
functions {
  // log Plackett-Luce probability of the order `ord` (ord[1] best) given log worths
  real plackett_luce_lpmf(array[] int ord, vector log_worth) {
    int K = num_elements(ord);
    vector[K] lw = log_worth[ord];
    // log of w_{o_j} + ... + w_{o_K} for every j: a reverse cumulative log-sum-exp
    vector[K] tail;
    tail[K] = lw[K];
    for (j in 1:(K - 1)) {
      tail[K - j] = log_sum_exp(lw[K - j], tail[K - j + 1]);
    }
    // the last factor is w / w = 1
    return sum(lw[1:(K - 1)]) - sum(tail[1:(K - 1)]);
  }
}
data {
  int<lower=2> K;                               // algorithms
  int<lower=1> D;                               // datasets
  int<lower=D> N;                               // strict orders, one or more per dataset
  array[N, K] int<lower=1, upper=K> order;      // order[n, j]: the algorithm in place j
  array[D] int<lower=1, upper=N> first_order;   // dataset d: rows first_order[d] ...
  array[D] int<lower=1> n_orders;               //   ... first_order[d] + n_orders[d] - 1
  vector<lower=0>[K] alpha;                     // Dirichlet prior of the worths
}
parameters {
  simplex[K] worth;
}
model {
  vector[K] log_worth = log(worth);
  worth ~ dirichlet(alpha);
  for (d in 1:D) {
    vector[n_orders[d]] lp;
    for (m in 1:n_orders[d]) {
      lp[m] = plackett_luce_lpmf(order[first_order[d] + m - 1] | log_worth);
    }
    target += log_sum_exp(lp) - log(n_orders[d]);
  }
}
generated quantities {
  // per dataset, for LOO and model checks
  vector[D] log_lik;
  {
    vector[K] log_worth = log(worth);
    for (d in 1:D) {
      vector[n_orders[d]] lp;
      for (m in 1:n_orders[d]) {
        lp[m] = plackett_luce_lpmf(order[first_order[d] + m - 1] | log_worth);
      }
      log_lik[d] = log_sum_exp(lp) - log(n_orders[d]);
    }
  }
}
