// The domain step of dperm.train (auto_domain_pg.hpp).
#include "release/auto_domain_pg.hpp"

#include "dperm/model/auto_domain.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "release/noise_key.hpp"
#include "release/row_reader.hpp"
#include "release/train_input.hpp"
#include "types/feature_spec_pg.hpp"
#include "types/options_pg.hpp"

extern "C" {
#include "executor/spi.h"
#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
}

namespace dperm::pg {
namespace {

// Values fetched at a time.
const long kBatchValues = 1000;

// A value's text read as the encoder reads a bounds column (ScaledBounded in
// feature_spec.cpp): at most kMaxNumberText bytes, strtod of the whole text;
// NaN for text that is not a number (skipped, as NULL: the encoder puts both
// at the middle of the range). Never raises.
double ParsedValue(const char* text) {
  char buffer[dperm::kMaxNumberText + 1];
  const size_t n = strnlen(text, dperm::kMaxNumberText);
  memcpy(buffer, text, n);
  buffer[n] = '\0';
  char* end = nullptr;
  const double x = strtod(buffer, &end);
  return end == buffer || *end != '\0' ? NAN : x;
}

}  // namespace

AutoDomains* PlanAutoDomains(const TrainInput& in, ReleaseRequest* r) {
  if (!in.has_spec || in.spec.spec->auto_columns() == 0) return nullptr;
  if (r->unit.column != nullptr)
    ereport(ERROR,
            (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
             errmsg("\"bounds\": \"auto\" is not supported on relation %s, whose privacy unit is "
                    "\"%s\"",
                    in.name, r->unit.column),
             errdetail("The private quantiles of the domain step are per row; at a unit of up to "
                       "k rows they would need sensitivity k. Nothing was charged."),
             errhint("Declare the bounds: {\"bounds\": [lo, hi]}.")));
  // The public share (kAutoDomainShare) of the epsilon asked. model = e -
  // share, and domain = e - model exactly (Sterbenz: model is in [e/2, e]),
  // so model + domain is e to the bit: the charge is the epsilon asked.
  const double asked = r->parsed.options.epsilon;
  const double model = asked - dperm::kAutoDomainShare * asked;
  const double domain = asked - model;
  r->domain_epsilon = domain;
  r->options = ModelEpsilonOptions(&r->parsed, r->options, model);
  // In the spec's own context (the caller's, outside SPI): the model states
  // the resolved spec after SPI_finish.
  MemoryContext outer = GetMemoryChunkContext(const_cast<dperm::FeatureSpec*>(in.spec.spec));
  AutoDomains* d = static_cast<AutoDomains*>(MemoryContextAllocZero(outer, sizeof(AutoDomains)));
  d->context = outer;
  d->reader = in.reader;
  d->from = in.qualified;
  d->declared = in.spec.spec;
  d->epsilon = domain;
  d->seeded = r->parsed.options.has_seed;
  d->seed = static_cast<uint64>(r->parsed.options.seed);
  return d;
}

void RunAutoDomains(AutoDomains* d) {
  const dperm::FeatureSpec& spec = *d->declared;
  // The auto columns, and one scan of them as the reader.
  int n_auto = 0;
  StringInfoData sql;
  initStringInfo(&sql);
  appendStringInfoString(&sql, "SELECT ");
  for (const dperm::FeatureColumn& c : spec.columns) {
    if (!c.auto_bounds || c.auto_epsilon != 0) continue;
    appendStringInfo(&sql, "%spg_catalog.substr(%s::pg_catalog.text, 1, %zu)",
                     n_auto > 0 ? ", " : "", quote_identifier(c.name.c_str()),
                     dperm::kMaxNumberText);
    n_auto++;
  }
  appendStringInfo(&sql, " FROM %s", d->from);
  PgBox<std::vector<dperm::QuantileCounts>> counts(CurrentMemoryContext);
  RunCore([&] { counts.Emplace(size_t(n_auto)); });
  Portal portal = OpenInternalCursor(d->reader, sql.data);
  MemoryContext batch =
      AllocSetContextCreate(CurrentMemoryContext, "dperm domains", ALLOCSET_DEFAULT_SIZES);
  for (;;) {
    CHECK_FOR_INTERRUPTS();
    FetchInternalCursor(d->reader, portal, kBatchValues);
    if (SPI_processed == 0) break;
    MemoryContext old = MemoryContextSwitchTo(batch);
    for (uint64 i = 0; i < SPI_processed; i++)
      for (int c = 0; c < n_auto; c++) {
        bool isnull;
        Datum v = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, c + 1, &isnull);
        if (!isnull) (*counts)[size_t(c)].Add(ParsedValue(TextDatumGetCString(v)));
      }
    MemoryContextSwitchTo(old);
    MemoryContextReset(batch);
    SPI_freetuptable(SPI_tuptable);
  }
  SPI_cursor_close(portal);
  MemoryContextDelete(batch);
  // Each column's bounds at epsilon / n_auto (basic composition over the
  // columns: Dwork & Roth 2014, Theorem 3.16), with a key of the step's
  // own (a seeded release: the seed's stream with its bits flipped, so the
  // model's noise is not the step's).
  NoiseKey key = DrawNoiseKey(d->seeded, ~d->seed);
  PgBox<dperm::FeatureSpec> resolved(d->context);
  const double per_column = d->epsilon / n_auto;
  RunKeyed(&key, [&](dperm::SecureRng& rng) {
    dperm::FeatureSpec& out = resolved.Emplace(spec);
    int a = 0;
    for (size_t c = 0; c < out.columns.size(); c++) {
      if (!out.columns[c].auto_bounds || out.columns[c].auto_epsilon != 0) continue;
      const dperm::AutoBounds b = dperm::ChooseAutoBounds((*counts)[size_t(a++)], per_column, rng);
      dperm::ResolveAutoBounds(&out, c, b.lo, b.hi, per_column);
    }
  });
  d->resolved = resolved.get();
  SpecSqlFor(*d->resolved, &d->features_sql, &d->label_sql);
}

}  // namespace dperm::pg
