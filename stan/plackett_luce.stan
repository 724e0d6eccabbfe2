// Bayesian Plackett-Luce model of the algorithms' rankings on many datasets (Calvo, Ceberio &
// Lozano 2018; Calvo et al. 2019): algorithm k has worth w_k, the worths form a simplex with
// a Dirichlet prior, and a ranking (best first) has probability
//   prod_{j < K} w_{o_j} / (w_{o_j} + ... + w_{o_K}).
//
// Ties: a dataset on which some algorithms tie is a coarsened ranking, a sequence of groups
// (best first) whose members may come in any order. Its likelihood is the probability of
// that event, the sum of the Plackett-Luce probabilities of the strict orders consistent with
// it. The sum factorises over the groups, since Plackett-Luce fills each next place from what
// remains: a group takes the next places, in any order, with probability f(S) at S = the
// group, where for the subsets S of the group, with W the worths summed and R the algorithms
// ranked after the group,
//   f(S) = sum_{k in S} w_k / (W(S) + W(R)) f(S \ {k}),   f(empty) = 1
// (the first of S's places goes to some k in S, chosen from S and R). Exact, and 2^g g / 2
// terms for a group of g where the orders number g!; a group without ties is the plain
// factor w_k / (w_k + W(R)), and the last group takes the last places with probability 1.
functions {
  // log f(members) given the worths and W(R) (see above), summed in linear space (cheaper than
  // sums of logs by an exp and a log per term): every term is positive, so nothing cancels,
  // and as the worths sum to 1, f is at least the product of its members' worths, so it
  // underflows only where a member's worth is below about 1e-308^(1/g) (1e-20 at g = 15; the
  // log density is then -infinity and the proposal rejected, not misread). The subsets of the
  // members by their bits, subset s at index s + 1.
  real group_first_log(array[] int members, vector worth, real rest) {
    int g = size(members);
    if (g == 1) {
      return log(worth[members[1]]) - log(worth[members[1]] + rest);
    }
    int n_subsets = 1;
    for (b in 1:g) {
      n_subsets *= 2;
    }
    vector[n_subsets] f;                     // f(S)
    vector[n_subsets] total;                 // W(S)
    f[1] = 1;
    total[1] = 0;
    for (s in 1:(n_subsets - 1)) {
      real sum_terms = 0;
      int bit = 1;
      int lowest = 0;                        // the bit of S's first member
      for (b in 1:g) {
        if ((s %/% bit) % 2 == 1) {
          sum_terms += worth[members[b]] * f[s - bit + 1];
          if (lowest == 0) {
            lowest = bit;
            total[s + 1] = total[s - bit + 1] + worth[members[b]];
          }
        }
        bit *= 2;
      }
      f[s + 1] = sum_terms / (total[s + 1] + rest);
    }
    return log(f[n_subsets]);
  }

  // log probability of a dataset's (coarsened) ranking: `ord` the algorithms best first, the
  // members of each group together; group_size[j] the size of the group that starts at place
  // j, 0 at the other places
  real tied_ranking_log(array[] int ord, array[] int group_size, vector worth) {
    int K = num_elements(ord);
    // w_{o_j} + ... + w_{o_K} for every j
    vector[K] tail = reverse(cumulative_sum(reverse(worth[ord])));
    real lp = 0;
    int place = 1;
    while (place <= K) {
      int after = place + group_size[place];
      if (after <= K) {
        lp += group_first_log(ord[place:(after - 1)], worth, tail[after]);
      }
      place = after;
    }
    return lp;
  }
}
data {
  int<lower=2> K;                                   // algorithms
  int<lower=1> D;                                   // datasets
  array[D, K] int<lower=1, upper=K> order;          // order[d, j]: the algorithm in place j
  array[D, K] int<lower=0, upper=K> group_size;     // size of the group starting at place j
  vector<lower=0>[K] alpha;                         // Dirichlet prior of the worths
}
transformed data {
  for (d in 1:D) {
    int place = 1;
    while (place <= K) {
      if (group_size[d, place] < 1) {
        reject("dataset ", d, ": no group starts at place ", place);
      }
      place += group_size[d, place];
    }
    if (place != K + 1) {
      reject("dataset ", d, ": the groups overrun the ", K, " places");
    }
  }
}
parameters {
  simplex[K] worth;
}
model {
  worth ~ dirichlet(alpha);
  for (d in 1:D) {
    target += tied_ranking_log(order[d], group_size[d], worth);
  }
}
generated quantities {
  // per dataset, for LOO and model checks: the log probability of its observed ranking
  vector[D] log_lik;
  for (d in 1:D) {
    log_lik[d] = tied_ranking_log(order[d], group_size[d], worth);
  }
}
