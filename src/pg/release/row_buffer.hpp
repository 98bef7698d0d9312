// The rows of a release (row_buffer.cpp): one type that every reader fills
// and every trainer reads. A row is stored sanitised (docs/design.md section
// 4): its features truncated or padded with zeros to the public d, NULL
// features the zero vector, then clipped (ClipRow); then its stored label.
// Stride d + 1, the in-memory layout the core views without copying.
//
// Filled by the in-memory aggregates' transition (aggregate.cpp), by
// dperm.train's cursor read (row_reader.cpp), and for a streaming release by
// that same read into a temporary file (streaming.cpp's copy of the rows).
#pragma once

#include "dperm/options/options.hpp"
#include "dperm/rows/rows.hpp"

#include <cmath>

#include "base/boundary.hpp"

extern "C" {
#include "storage/fd.h"
#include "utils/array.h"
}

namespace dperm::pg {

// How a label value becomes the stored label: by the loss's label kind
// (options.hpp, LabelKind) and, for a binary label, the SQL type.
enum class LabelRule { kBoolean, kBinaryFloat, kTarget, kClass };

// The label kind a rule stores.
inline dperm::LabelKind LabelKindOf(LabelRule rule) {
  switch (rule) {
    case LabelRule::kBoolean:
    case LabelRule::kBinaryFloat: return dperm::LabelKind::kBinary;
    case LabelRule::kTarget: return dperm::LabelKind::kTarget;
    case LabelRule::kClass: return dperm::LabelKind::kClass;
  }
  return dperm::LabelKind::kBinary;
}

// The stored label of a row: the sanitising rule of docs/design.md section
// 4, one rule for the in-memory and per-pass aggregates and dperm.train's
// read (every row is kept, so n is the number of rows read whatever their
// values). A NULL label is imputed as a NaN one (logistic: negative; Huber:
// 0), a NULL class as class 0, and a class outside 0 .. K-1 is clamped into
// it, as features are clipped. `value` is a bool, float8 or int4 Datum by
// the rule. Inline: it runs once a row.
inline double StoredLabel(LabelRule rule, bool null_label, Datum value, double target_bound,
                          int classes) {
  switch (rule) {
    case LabelRule::kBoolean: return !null_label && DatumGetBool(value) ? 1.0 : -1.0;
    case LabelRule::kBinaryFloat: return LogisticLabel(null_label ? NAN : DatumGetFloat8(value));
    case LabelRule::kTarget:
      return HuberTarget(null_label ? NAN : DatumGetFloat8(value), target_bound);
    case LabelRule::kClass: return null_label ? 0 : Max(0, Min(classes - 1, DatumGetInt32(value)));
  }
  return 0;
}

// The same for argument 2 of a training or per-pass aggregate call.
inline double StoredLabel(FunctionCallInfo fcinfo, LabelRule rule, double target_bound,
                          int classes) {
  return StoredLabel(rule, PG_ARGISNULL(2), PG_GETARG_DATUM(2), target_bound, classes);
}

// The rows, plain data in PostgreSQL memory. In memory (the default) it
// holds every row, up to dperm.max_buffer: past it the rows are dropped and
// only counted (over_buffer; the release is refused). With a file
// (OpenRowFile) it holds one chunk and writes each full chunk to a
// temporary file (temp_tablespaces, counted against temp_file_limit,
// deleted with the buffer or its transaction).
struct RowBuffer {
  MemoryContext context;  // where the rows live
  int d;                  // the public d; -1 until known (an aggregate, d not declared)
  LabelRule rule;
  double feature_bound;
  double target_bound;
  int classes;
  int64 n;       // rows added: every row counts
  double* rows;  // `held` rows of stride d + 1
  int64 held;
  int64 capacity;
  bool over_buffer;  // in memory: n (d + 1) float8 passed dperm.max_buffer
  double* pending;   // labels of rows added before d was known
  int64 n_pending;
  int64 pending_capacity;
  bool spills;  // the rows go to `file`, a chunk at a time
  File file;
  off_t bytes;  // bytes written to the file
};

// An empty buffer in `context` for rows of public shape d (-1: the first
// non-NULL features decide; SetRowDimension), labels by `rule`, features
// clipped to o.feature_bound, labels by o.target_bound and `classes`.
void InitRowBuffer(RowBuffer* rows, MemoryContext context, int d, LabelRule rule, const Options& o,
                   int classes);

// The same with a temporary file: streaming's copy of the rows.
void OpenRowFile(RowBuffer* rows, int d, LabelRule rule, const Options& o, int classes);

// Adds one row: `features` (nullptr: NULL) of any shape, sanitised and
// clipped, and `label`, already stored (StoredLabel). Never fails on a
// row's values or shape.
void AddRow(RowBuffer* rows, ArrayType* features, double label);

// Fixes d (the first non-NULL features of a release whose d is not
// declared): the rows added before it become zero vectors.
void SetRowDimension(RowBuffer* rows, int d);

// Ends the adding: d still unknown (every features value NULL) becomes 0;
// a file gets its last chunk.
void FinishRows(RowBuffer* rows);

// Reads the file's bytes [offset, offset + bytes) into rows->rows (at most
// one chunk, whole records); returns the records read.
int64 ReadRowChunk(RowBuffer* rows, off_t offset, int bytes);

// Bytes of one chunk of a file's records.
off_t RowChunkBytes(const RowBuffer* rows);

// Closes the file and frees the memory.
void FreeRows(RowBuffer* rows);

// Whether n rows of d features fit in dperm.max_buffer (in-memory mode),
// and in half of temp_file_limit (a streaming copy): n and d only, public.
bool InMemoryFits(int64 n, int d);
bool RowFileFits(int64 n, int d);

// Refuses an in-memory release whose rows pass dperm.max_buffer (SQLSTATE
// 54000, hint: dperm.train). Uncharged: it depends only on n and d, which
// are public under replace-one neighbours (docs/design.md section 4).
[[noreturn]] void RaiseBufferRefusal();

}  // namespace dperm::pg
