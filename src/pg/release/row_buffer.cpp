// The rows of a release (row_buffer.hpp): sanitised, clipped rows of stride
// d + 1, in memory up to dperm.max_buffer, or a chunk at a time in a
// temporary file.
#include "dperm/options/options.hpp"
#include "dperm/rows/rows.hpp"

#include <algorithm>

#include "base/arrays.hpp"
#include "base/settings.hpp"
#include "release/row_buffer.hpp"

extern "C" {
#include "commands/tablespace.h"
#include "utils/guc.h"
#include "utils/wait_event.h"
}

namespace dperm::pg {
namespace {

// A file's chunk: what is written or read at a time.
const int kChunkBytes = 8 << 20;

Size RowBytes(int64 rows, int d) {
  return static_cast<Size>(rows) * (Max(d, 0) + 1) * sizeof(double);
}

// dperm.max_buffer in bytes.
Size BufferLimit() { return static_cast<Size>(g_max_buffer_kb) * 1024; }

// Whether `rows` rows of shape d (plus the label) fit under dperm.max_buffer.
bool BufferFits(int64 rows, int d) {
  return static_cast<double>(rows) * (Max(d, 0) + 1) * sizeof(double) <=
         static_cast<double>(BufferLimit());
}

// Room for `more` rows in memory (doubling, huge allocations allowed).
void Reserve(RowBuffer* b, int64 more) {
  if (b->n + more <= b->capacity) return;
  // Start with up to 1024 rows, but no more than about 8 MB.
  int64 first = Max((int64)1, Min((int64)1024, (int64)(8 << 20) / (int64)RowBytes(1, b->d)));
  int64 capacity = Max(b->capacity * 2, Max(b->n + more, first));
  // Never more than dperm.max_buffer (the caller checked that n + more fit).
  capacity = Max(b->n + more, Min(capacity, (int64)(BufferLimit() / RowBytes(1, b->d))));
  Size bytes = RowBytes(capacity, b->d);
  b->rows = static_cast<double*>(b->rows == nullptr ? MemoryContextAllocHuge(b->context, bytes)
                                                    : repalloc_huge(b->rows, bytes));
  b->capacity = capacity;
}

// The first min(elements, d) elements of a float8[] of any shape, in
// storage order (NULL elements become NaN, which ClipRow makes 0); *count
// is their number. Reads none past d (AppendRow drops them anyway): a row's
// cost does not grow with its array's length.
const double* ArrayElements(ArrayType* array, int d, int* count) {
  int n = ArrayGetNItems(ARR_NDIM(array), ARR_DIMS(array));
  *count = Min(n, d);
  if (!ARR_HASNULL(array)) return reinterpret_cast<const double*>(ARR_DATA_PTR(array));
  double* out = static_cast<double*>(palloc(sizeof(double) * Max(*count, 1)));
  *count = Float8ArrayPrefix(array, d, out);
  return out;
}

// Keeps a label of a row added before d is known (every features value so
// far NULL): the row is the zero vector.
void AddPending(RowBuffer* b, double label) {
  if (b->n_pending == b->pending_capacity) {
    b->pending_capacity = Max((int64)64, 2 * b->pending_capacity);
    Size bytes = sizeof(double) * b->pending_capacity;
    b->pending =
        static_cast<double*>(b->pending == nullptr ? MemoryContextAllocHuge(b->context, bytes)
                                                   : repalloc_huge(b->pending, bytes));
  }
  b->pending[b->n_pending++] = label;
}

// Writes the chunk held to the file.
void FlushChunk(RowBuffer* b) {
  const int bytes = int(RowBytes(b->held, b->d));
  if (bytes == 0) return;
  errno = 0;
  const int written = FileWrite(b->file, reinterpret_cast<char*>(b->rows), bytes, b->bytes,
                                WAIT_EVENT_BUFFILE_WRITE);
  if (written != bytes) {
    if (errno == 0) errno = ENOSPC;
    ereport(ERROR,
            (errcode_for_file_access(),
             errmsg("could not write dperm's temporary copy of the rows: %m"),
             errhint("Free space for temp_tablespaces, or SET dperm.streaming_spill = off.")));
  }
  b->bytes += bytes;
  b->held = 0;
}

// The slot of the next row (nullptr: in memory past dperm.max_buffer, the
// row is only counted).
double* NextSlot(RowBuffer* b) {
  if (b->spills) return b->rows + b->held * (b->d + 1);
  if (!BufferFits(b->n + 1, b->d)) {  // past the cap: the rows are dropped, the count goes on
    b->over_buffer = true;
    if (b->rows != nullptr) pfree(b->rows);
    b->rows = nullptr;
    b->capacity = 0;
    b->held = 0;
  }
  if (b->over_buffer) return nullptr;
  Reserve(b, 1);
  return b->rows + b->n * (b->d + 1);
}

// Appends one sanitised row: its features (nullptr: NULL; `count` of them)
// truncated or padded with zeros to d, then clipped (ClipRow), and its label.
void AppendRow(RowBuffer* b, const double* x, int count, double label) {
  const int d = b->d;
  double* row = NextSlot(b);
  b->n++;
  if (row == nullptr) return;
  if (x != nullptr && count >= d) {
    ClipRow(x, d, b->feature_bound, row);
  } else {
    double* padded = static_cast<double*>(palloc0(sizeof(double) * Max(d, 1)));
    if (x != nullptr) memcpy(padded, x, sizeof(double) * count);
    ClipRow(padded, d, b->feature_bound, row);
    pfree(padded);
  }
  row[d] = label;
  if (++b->held == b->capacity && b->spills) FlushChunk(b);
}

}  // namespace

void InitRowBuffer(RowBuffer* rows, MemoryContext context, int d, LabelRule rule, const Options& o,
                   int classes) {
  memset(rows, 0, sizeof(RowBuffer));
  rows->context = context;
  rows->d = d;
  rows->rule = rule;
  rows->feature_bound = o.feature_bound;
  rows->target_bound = o.target_bound;
  rows->classes = classes;
}

void OpenRowFile(RowBuffer* rows, int d, LabelRule rule, const Options& o, int classes) {
  InitRowBuffer(rows, CurrentMemoryContext, d, rule, o, classes);
  rows->spills = true;
  rows->capacity = std::max<int64>(1, kChunkBytes / int64(RowBytes(1, d)));
  rows->rows = static_cast<double*>(palloc(RowBytes(rows->capacity, d)));
  PrepareTempTablespaces();
  rows->file = OpenTemporaryFile(false);
}

void AddRow(RowBuffer* rows, ArrayType* features, double label) {
  if (rows->d < 0) {  // only NULL features so far (a non-NULL one sets d first)
    AddPending(rows, label);
    return;
  }
  int count = 0;
  const double* x =
      features == nullptr || rows->over_buffer ? nullptr : ArrayElements(features, rows->d, &count);
  AppendRow(rows, x, count, label);
}

void SetRowDimension(RowBuffer* rows, int d) {
  rows->d = d;
  for (int64 i = 0; i < rows->n_pending; i++) AppendRow(rows, nullptr, 0, rows->pending[i]);
  rows->n_pending = 0;
}

void FinishRows(RowBuffer* rows) {
  if (rows->d < 0) SetRowDimension(rows, 0);
  if (rows->spills) FlushChunk(rows);
}

off_t RowChunkBytes(const RowBuffer* rows) { return off_t(RowBytes(rows->capacity, rows->d)); }

int64 ReadRowChunk(RowBuffer* rows, off_t offset, int bytes) {
  errno = 0;
  if (FileRead(rows->file, reinterpret_cast<char*>(rows->rows), bytes, offset,
               WAIT_EVENT_BUFFILE_READ) != bytes) {
    if (errno == 0) errno = EIO;
    ereport(ERROR, (errcode_for_file_access(),
                    errmsg("could not read dperm's temporary copy of the rows: %m")));
  }
  return int64(bytes / RowBytes(1, rows->d));
}

void FreeRows(RowBuffer* rows) {
  if (rows->spills) FileClose(rows->file);
  rows->spills = false;
  if (rows->rows != nullptr) pfree(rows->rows);
  if (rows->pending != nullptr) pfree(rows->pending);
  rows->rows = rows->pending = nullptr;
}

bool InMemoryFits(int64 n, int d) { return BufferFits(n, d); }

bool RowFileFits(int64 n, int d) {
  // Half of temp_file_limit: the rest for the statement's own sorts and hashes.
  if (temp_file_limit < 0) return true;
  const double bytes = double(n) * double(d + 1) * sizeof(double);
  return bytes <= double(temp_file_limit) * 1024.0 / 2;
}

void RaiseBufferRefusal() {
  ereport(ERROR,
          (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
           errmsg("the rows do not fit in dperm.max_buffer (%s)",
                  GetConfigOptionByName("dperm.max_buffer", nullptr, false)),
           errdetail("dp_logreg, dp_huber and dp_softmax keep every row (d + 1 float8 values) in "
                     "the backend's memory. Nothing was charged: whether n (d + 1) 8 bytes pass "
                     "the limit depends only on n and d, which every release makes public."),
           errhint("Train with dperm.train(relation, features, label, loss, options), which "
                   "streams over the relation in constant memory; or a superuser can raise "
                   "dperm.max_buffer.")));
  pg_unreachable();
}

}  // namespace dperm::pg
