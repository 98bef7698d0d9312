// Full passes over the rows on several threads (row_parts.hpp states why and how).
#include "dperm/rows/row_parts.hpp"

#include "dperm/rows/exact_sum.hpp"

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace dperm {

namespace {
int g_row_threads = 1;

// Blocks every signal on the calling thread while it lives, so that a thread
// started meanwhile inherits the full mask; restores the old one after.
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old_);
  }
  ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t old_;
};
}  // namespace

void SetRowThreadLimit(int threads) { g_row_threads = std::max(1, threads); }

int RowParts(int64_t n, uint64_t work_per_row) {
  if (n <= 0 || g_row_threads <= 1) return 1;
  const uint64_t work = uint64_t(n) * std::max<uint64_t>(work_per_row, 1);
  const uint64_t fit = work / kMinPartWork;
  return int(std::clamp<uint64_t>(fit, 1, uint64_t(g_row_threads)));
}

void ForRowParts(int64_t n, int parts, const RowPartBody& body) {
  parts = int(std::clamp<int64_t>(parts, 1, std::max<int64_t>(n, 1)));
  auto first_row = [&](int part) { return n * part / parts; };
  std::vector<std::exception_ptr> errors(static_cast<size_t>(parts));
  auto run = [&](int part) {
    try {
      body(part, first_row(part), first_row(part + 1));
    } catch (...) {
      errors[size_t(part)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(size_t(parts));  // emplace_back never reallocates below
  std::vector<int> inline_parts;   // parts whose thread could not be started
  {
    SignalsBlocked blocked;
    for (int part = 1; part < parts; part++) {
      try {
        threads.emplace_back(run, part);
      } catch (...) {
        inline_parts.push_back(part);
      }
    }
  }
  run(0);
  for (int part : inline_parts) run(part);
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

void SumRowParts(int64_t n, uint64_t work_per_row, ExactSum& total, const ExactRowsAdd& add) {
  const int parts = RowParts(n, work_per_row);
  std::vector<ExactSum> sums(static_cast<size_t>(parts), ExactSum(total.dim(), total.grid()));
  ForRowParts(n, parts,
              [&](int part, int64_t begin, int64_t end) { add(begin, end, sums[size_t(part)]); });
  for (const ExactSum& sum : sums) total.Merge(sum);
}

}  // namespace dperm
