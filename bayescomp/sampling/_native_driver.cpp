// bayescomp's in-memory driver for Stan's NUTS sampler (diagonal metric, adapted), compiled
// together with one Stan program's C++ (from httpstan's stanc) against httpstan's headers.
//
// Why: httpstan's own driver sends every draw twice (sample and diagnostic writers) as JSON
// with field names, one socket write per draw per writer; for a program of 60 parameters that
// costs more than the sampling. Here the draws go into one contiguous buffer, the diagnostic
// writer is Stan's no-op writer, and the GIL is released while a chain runs, so the chains of
// one fit run as threads of the calling process. The sampler, its arguments and the random
// number streams are Stan's own (stan::services::sample::hmc_nuts_diag_e_adapt), so a seed
// gives the same draws as httpstan's driver.
//
// BAYESCOMP_MODULE (the Python module name) is defined by the build.
#include <atomic>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <stan/callbacks/interrupt.hpp>
#include <stan/callbacks/logger.hpp>
#include <stan/callbacks/writer.hpp>
#include <stan/io/array_var_context.hpp>
#include <stan/model/model_base.hpp>
#include <stan/services/sample/hmc_nuts_diag_e.hpp>
#include <stan/services/sample/hmc_nuts_diag_e_adapt.hpp>
#include <stan/services/util/create_unit_e_diag_inv_metric.hpp>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

// stan::model::gradient, which the sampler calls once per leapfrog step, constructs a
// std::stringstream (a locale and its facets) for the program's messages every time: 5% of a
// step of stan/hierarchical.stan. This specialisation does the same with one stream per
// thread, emptied before each use. Messages reach the logger as before.
namespace stan {
namespace model {
template <>
void gradient<model_base>(const model_base &model,
                          const Eigen::Matrix<double, Eigen::Dynamic, 1> &x, double &f,
                          Eigen::Matrix<double, Eigen::Dynamic, 1> &grad_f,
                          callbacks::logger &logger) {
  static thread_local std::stringstream messages;
  messages.str(std::string());
  messages.clear();
  try {
    stan::math::gradient(model_functional<model_base>(model, &messages), x, f, grad_f);
  } catch (const std::exception &) {
    if (messages.tellp() > 0) logger.info(messages);
    throw;
  }
  if (messages.tellp() > 0) logger.info(messages);
}
}  // namespace model
}  // namespace stan

stan::model::model_base &new_model(stan::io::var_context &data_context, unsigned int seed,
                                   std::ostream *msg_stream);

namespace {

// The same "level:text" lines httpstan's logger sends, so the Python side reads both alike.
class line_logger : public stan::callbacks::logger {
 public:
  std::vector<std::string> lines;
  void debug(const std::string &m) override { lines.push_back("debug:" + m); }
  void debug(const std::stringstream &m) override { debug(m.str()); }
  void info(const std::string &m) override { lines.push_back("info:" + m); }
  void info(const std::stringstream &m) override { info(m.str()); }
  void warn(const std::string &m) override { lines.push_back("warn:" + m); }
  void warn(const std::stringstream &m) override { warn(m.str()); }
  void error(const std::string &m) override { lines.push_back("error:" + m); }
  void error(const std::stringstream &m) override { error(m.str()); }
  void fatal(const std::string &m) override { lines.push_back("fatal:" + m); }
  void fatal(const std::stringstream &m) override { fatal(m.str()); }
};

// The sample writer: a header of names, then notes (adaptation) and one row per draw.
class table_writer : public stan::callbacks::writer {
 public:
  std::vector<std::string> columns;
  std::vector<double> values;
  std::vector<std::string> notes;
  bool ragged = false;
  void operator()(const std::vector<std::string> &names) override { columns = names; }
  void operator()(const std::vector<double> &state) override {
    if (state.size() != columns.size()) {
      ragged = true;
      return;
    }
    values.insert(values.end(), state.begin(), state.end());
  }
  void operator()(const std::string &message) override { notes.push_back(message); }
};

// Bumped by cancel_all(): a chain started under an older value stops at its next iteration
// (Stan's services call the interrupt callback once per iteration), so KeyboardInterrupt
// does not wait for the whole fit.
std::atomic<long> cancel_generation{0};

class cancellable : public stan::callbacks::interrupt {
 public:
  explicit cancellable(long generation) : generation_(generation) {}
  void operator()() override {
    if (cancel_generation.load(std::memory_order_relaxed) != generation_) {
      throw std::runtime_error("interrupted");
    }
  }

 private:
  long generation_;
};

struct split_data {
  std::vector<std::string> names_r;
  std::vector<double> values_r;
  std::vector<std::vector<size_t>> dims_r;
  std::vector<std::string> names_i;
  std::vector<int> values_i;
  std::vector<std::vector<size_t>> dims_i;

  explicit split_data(const py::tuple &parts)
      : names_r(parts[0].cast<std::vector<std::string>>()),
        values_r(parts[1].cast<std::vector<double>>()),
        dims_r(parts[2].cast<std::vector<std::vector<size_t>>>()),
        names_i(parts[3].cast<std::vector<std::string>>()),
        values_i(parts[4].cast<std::vector<int>>()),
        dims_i(parts[5].cast<std::vector<std::vector<size_t>>>()) {}

  stan::io::array_var_context context() const {
    return stan::io::array_var_context(names_r, values_r, dims_r, names_i, values_i, dims_i);
  }
};

// Names and shapes of everything a draw holds, from a model built on the data.
py::tuple describe(const py::tuple &data_parts) {
  split_data data(data_parts);
  std::vector<std::string> names, constrained;
  std::vector<std::vector<size_t>> dims;
  std::stringstream messages;
  {
    py::gil_scoped_release release;
    stan::io::array_var_context context = data.context();
    std::unique_ptr<stan::model::model_base> model(&new_model(context, 0, &messages));
    model->get_param_names(names, true, true);
    model->get_dims(dims, true, true);
    model->constrained_param_names(constrained, true, true);
  }
  return py::make_tuple(names, dims, constrained);
}

// One chain, stopped if cancel_all() is called after generation() returned `generation`.
// `metric_parts` holds `inv_metric` (split as data) or nothing (the unit metric). With
// `adapt` the step size and metric are adapted during warm-up, as Stan's default; without,
// the chain keeps `stepsize` and the metric given (a continued chain), as CmdStan's
// adapt engaged=0 does.
// Returns (return code, error text, columns, the draws as bytes of row-major
// doubles, logger lines, notes).
py::tuple sample(const py::tuple &data_parts, const py::tuple &init_parts,
                 const py::tuple &metric_parts, bool adapt,
                 unsigned int random_seed, unsigned int chain, double init_radius, int num_warmup, int num_samples,
                 int num_thin, bool save_warmup, int refresh, double stepsize,
                 double stepsize_jitter, int max_depth, double delta, double gamma, double kappa,
                 double t0, unsigned int init_buffer, unsigned int term_buffer,
                 unsigned int window, long generation) {
  split_data data(data_parts), init(init_parts);
  const bool unit_metric = py::len(metric_parts) == 0;
  std::unique_ptr<split_data> metric(unit_metric ? nullptr : new split_data(metric_parts));
  line_logger logger;
  table_writer draws;
  stan::callbacks::writer init_writer, diagnostic_writer;  // Stan's no-op writer
  cancellable interrupt(generation);
  int return_code = -1;
  std::string error;
  {
    py::gil_scoped_release release;
    // each thread needs its own autodiff tape (Stan is built with STAN_THREADS)
    stan::math::ChainableStack tape;
    std::stringstream model_messages;
    try {
      stan::io::array_var_context data_context = data.context();
      stan::io::array_var_context init_context = init.context();
      std::unique_ptr<stan::model::model_base> model(
          &new_model(data_context, random_seed, &model_messages));
      auto unit = stan::services::util::create_unit_e_diag_inv_metric(model->num_params_r());
      std::unique_ptr<stan::io::array_var_context> given;
      if (!unit_metric) given.reset(new stan::io::array_var_context(metric->context()));
      const stan::io::var_context &metric_context =
          unit_metric ? static_cast<const stan::io::var_context &>(unit) : *given;
      if (adapt) {
        return_code = stan::services::sample::hmc_nuts_diag_e_adapt(
            *model, init_context, metric_context, random_seed, chain, init_radius, num_warmup,
            num_samples, num_thin, save_warmup, refresh, stepsize, stepsize_jitter, max_depth,
            delta, gamma, kappa, t0, init_buffer, term_buffer, window, interrupt, logger,
            init_writer, draws, diagnostic_writer);
      } else {
        return_code = stan::services::sample::hmc_nuts_diag_e(
            *model, init_context, metric_context, random_seed, chain, init_radius, num_warmup,
            num_samples, num_thin, save_warmup, refresh, stepsize, stepsize_jitter, max_depth,
            interrupt, logger, init_writer, draws, diagnostic_writer);
      }
    } catch (const std::exception &e) {
      error = e.what();
    }
    if (!model_messages.str().empty()) {
      logger.info(model_messages.str());
    }
  }
  if (draws.ragged) {
    error += (error.empty() ? "" : "; ") + std::string("draws with differing numbers of values");
  }
  // raw bytes, not a numpy array: pybind11's numpy support initialises a function-local
  // static on first use while calling into Python, which deadlocks when two chains finish
  // at once (seen in a Jupyter kernel)
  py::bytes table(reinterpret_cast<const char *>(draws.values.data()),
                  draws.values.size() * sizeof(double));
  return py::make_tuple(return_code, error, draws.columns, table, logger.lines, draws.notes);
}

}  // namespace

PYBIND11_MODULE(BAYESCOMP_MODULE, m) {
  m.def("describe", &describe);
  // named as httpstan names the services' arguments; Python passes every one by name
  m.def("sample", &sample, py::arg("data_parts"), py::arg("init_parts"),
        py::arg("metric_parts"), py::arg("adapt"), py::arg("random_seed"),
        py::arg("chain"), py::arg("init_radius"), py::arg("num_warmup"), py::arg("num_samples"),
        py::arg("num_thin"), py::arg("save_warmup"), py::arg("refresh"), py::arg("stepsize"),
        py::arg("stepsize_jitter"), py::arg("max_depth"), py::arg("delta"), py::arg("gamma"),
        py::arg("kappa"), py::arg("t0"), py::arg("init_buffer"), py::arg("term_buffer"),
        py::arg("window"), py::arg("generation"));
  m.def("generation", [] { return cancel_generation.load(); });
  m.def("cancel_all", [] { cancel_generation.fetch_add(1); });
}
