// Options: jsonb -> OptionEntry list -> core validation, and dp_options'
// checker.
#include "dperm/options/options.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "types/options_pg.hpp"

extern "C" {
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/numeric.h"
}

namespace dperm::pg {
namespace {

char* TextOf(const JsonbValue& v) { return pnstrdup(v.val.string.val, v.val.string.len); }

// Converts one jsonb value to an entry. Arrays are read by the caller.
void ReadScalar(const JsonbValue& v, OptionEntry* e) {
  switch (v.type) {
    case jbvNull: e->kind = OptionEntry::Kind::kNull; break;
    case jbvBool:
      e->kind = OptionEntry::Kind::kBool;
      e->boolean = v.val.boolean;
      break;
    case jbvString:
      e->kind = OptionEntry::Kind::kString;
      e->text = TextOf(v);
      break;
    case jbvNumeric:
      e->kind = OptionEntry::Kind::kNumber;
      e->number = DatumGetFloat8(
          DirectFunctionCall1(numeric_float8_no_overflow, NumericGetDatum(v.val.numeric)));
      break;
    default: e->kind = OptionEntry::Kind::kOther;
  }
}

// Walks the top-level object: one entry per key; arrays of strings are
// kept as such, any other array or nested object is kOther.
OptionEntry* ReadEntries(Jsonb* options, int* count) {
  if (!JB_ROOT_IS_OBJECT(options) || JB_ROOT_IS_SCALAR(options))
    ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                    errmsg("dperm options must be a JSON object"),
                    errhint("Build them with dp_options(epsilon => 1.0, ...).")));
  int capacity = JB_ROOT_COUNT(options) + 1;
  OptionEntry* entries = static_cast<OptionEntry*>(palloc0(sizeof(OptionEntry) * capacity));
  int n = 0;
  JsonbIterator* it = JsonbIteratorInit(&options->root);
  JsonbValue v;
  JsonbIteratorToken token;
  int depth = 0;
  OptionEntry* current = nullptr;
  List* items = NIL;
  while ((token = JsonbIteratorNext(&it, &v, false)) != WJB_DONE) {
    switch (token) {
      case WJB_BEGIN_OBJECT:
      case WJB_BEGIN_ARRAY:
        depth++;
        if (depth == 2 && token == WJB_BEGIN_ARRAY) {
          current->kind = OptionEntry::Kind::kStringArray;
          items = NIL;
        } else if (depth == 2) {
          current->kind = OptionEntry::Kind::kOther;
        }
        break;
      case WJB_END_OBJECT:
      case WJB_END_ARRAY:
        if (depth == 2 && current->kind == OptionEntry::Kind::kStringArray) {
          const char** names =
              static_cast<const char**>(palloc0(sizeof(char*) * (list_length(items) + 1)));
          int i = 0;
          ListCell* lc;
          foreach (lc, items) names[i++] = static_cast<const char*>(lfirst(lc));
          current->items = names;
          current->n_items = i;
        }
        depth--;
        break;
      case WJB_KEY:
        if (depth == 1) {
          current = &entries[n++];
          current->key = TextOf(v);
        }
        break;
      case WJB_VALUE:
        if (depth == 1) ReadScalar(v, current);
        break;
      case WJB_ELEM:
        if (depth == 2 && current->kind == OptionEntry::Kind::kStringArray) {
          if (v.type == jbvString) items = lappend(items, TextOf(v));
          else current->kind = OptionEntry::Kind::kOther;
        }
        break;
      default: break;
    }
  }
  *count = n;
  return entries;
}

// One row of dperm.option_reference().
struct OptionRow {
  std::string key, sql_type, values, fallback, meaning;
};

// Markdown's escaped pipe back to a plain one.
std::string Unescape(const std::string& cell) {
  std::string out;
  for (size_t i = 0; i < cell.size(); i++) {
    if (cell[i] == '\\' && i + 1 < cell.size() && cell[i + 1] == '|') continue;
    out += cell[i];
  }
  return out;
}

// The option table as OptionsMarkdown renders it, one row per option: the
// values column (a range rendered from lo..hi) and the meaning (with the
// per-algorithm refusal note) are read from that rendering, so the SQL view
// and the markdown table cannot disagree.
std::vector<OptionRow> OptionRows() {
  const std::string md = OptionsMarkdown();
  size_t at = md.find('\n', md.find('\n') + 1) + 1;  // past the header and rule
  std::vector<OptionRow> rows;
  for (const OptionSpec& spec : OptionTable()) {
    const size_t end = md.find('\n', at);
    if (end == std::string::npos) throw std::logic_error("option table rendering is short");
    const std::string line = md.substr(at + 2, end - at - 4);  // without "| " and " |"
    at = end + 1;
    std::vector<std::string> cells;
    size_t from = 0;
    for (int i = 0; i < 4; i++) {
      const size_t bar = line.find(" | ", from);
      if (bar == std::string::npos) throw std::logic_error("option table row is malformed");
      cells.push_back(line.substr(from, bar - from));
      from = bar + 3;
    }
    cells.push_back(line.substr(from));
    if (cells[0] != std::string("`") + spec.key + "`")
      throw std::logic_error("option table rendering is out of order");
    rows.push_back(
        {spec.key, spec.sql_type, Unescape(cells[2]), Unescape(cells[3]), Unescape(cells[4])});
  }
  return rows;
}

}  // namespace

char* JsonbText(Jsonb* value) { return JsonbToCString(nullptr, &value->root, VARSIZE(value)); }

ParsedOptions ParseOptionsJsonb(Jsonb* options) {
  int count = 0;
  OptionEntry* entries = ReadEntries(options, &count);
  ParsedOptions parsed;
  RunCore([&] { parsed.options = ParseOptions(entries, count); });
  for (int i = 0; i < count; i++) {
    if (strcmp(entries[i].key, "dataset") == 0 && entries[i].text != nullptr)
      parsed.dataset = entries[i].text;
    if (strcmp(entries[i].key, "feature_names") == 0) parsed.feature_names = entries[i].items;
  }
  return parsed;
}

namespace {

// Stores `value` as option `key` the way ParseOptions stores a given one:
// its range checked (the table's error), its `given` bit set.
void StoreOption(Options* o, const char* key, double value) {
  const OptionSpec* spec = FindOption(key);
  OptionEntry entry;
  entry.key = key;
  entry.kind = OptionEntry::Kind::kNumber;
  entry.number = value;
  spec->store(entry, CheckedOptionValue(*spec, entry), *o);
  o->given |= 1u << (spec - OptionTable().data());
}

}  // namespace

Jsonb* UnitModelOptions(ParsedOptions* parsed, Jsonb* options, double epsilon, int64 k) {
  // The floors, stated at the epsilon the caller asked and its split (the
  // count's share, the model's rest, per row of a unit's k): the core's
  // checks below would name the model's share alone.
  const double asked = parsed->options.epsilon;
  if (epsilon < dperm::kMinEpsilon ||
      (k > 1 && epsilon / static_cast<double>(k) < dperm::kMinEpsilon))
    ereport(
        ERROR,
        (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
         errmsg("epsilon = %g is too small for a release per unit of at most " INT64_FORMAT " rows",
                asked, k),
         errdetail("Of epsilon = %g, the noisy count of units takes %g and the model %g, "
                   "which is %g per row slot (epsilon / max_rows_per_unit); each must be at "
                   "least %g.",
                   asked, asked - epsilon, epsilon, epsilon / static_cast<double>(k),
                   dperm::kMinEpsilon),
         errhint("Raise epsilon to about %g or more, or ask the owner for a smaller "
                 "max_rows_per_unit. Nothing was charged.",
                 asked * dperm::kMinEpsilon * static_cast<double>(k) / epsilon)));
  RunCore([&] {
    StoreOption(&parsed->options, "max_rows_per_unit", static_cast<double>(k));
    StoreOption(&parsed->options, "epsilon", epsilon);
    // The floor ParseOptions holds every given epsilon to (the other keys
    // passed it already).
    OptionEntry given;
    given.key = "epsilon";
    given.kind = OptionEntry::Kind::kNumber;
    given.number = epsilon;
    ParseOptions(&given, 1);
  });
  Datum with_k = WithOption(options, "max_rows_per_unit", k);
  return DatumGetJsonbP(WithNumberOption(DatumGetJsonbP(with_k), "epsilon", epsilon));
}

Jsonb* ModelEpsilonOptions(ParsedOptions* parsed, Jsonb* options, double epsilon) {
  RunCore([&] {
    StoreOption(&parsed->options, "epsilon", epsilon);
    OptionEntry given;
    given.key = "epsilon";
    given.kind = OptionEntry::Kind::kNumber;
    given.number = epsilon;
    ParseOptions(&given, 1);
  });
  return DatumGetJsonbP(WithNumberOption(options, "epsilon", epsilon));
}

LossKind ParseLossName(const char* name) {
  // The names of losses.def; no C++ object outlives the loops (the hint is
  // palloc'd), so ereport is safe.
  for (LossKind k : dperm::AllLosses())
    if (strcmp(name, dperm::LossName(k)) == 0) return k;
  StringInfoData valid;
  initStringInfo(&valid);
  for (LossKind k : dperm::AllLosses())
    appendStringInfo(&valid, "%s%s", valid.len > 0 ? ", " : "", dperm::LossName(k));
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("unknown loss \"%s\"", name),
                  errhint("Valid losses: %s.", valid.data)));
  pg_unreachable();
}

namespace {

// `options` with `key` set to the JSON text `value`.
Datum WithJsonOption(Jsonb* options, const char* key, const char* value) {
  StringInfoData pair;
  initStringInfo(&pair);
  appendStringInfoString(&pair, "{");
  escape_json(&pair, key);
  appendStringInfo(&pair, ": %s}", value);
  Datum extra = DirectFunctionCall1(jsonb_in, CStringGetDatum(pair.data));
  return DirectFunctionCall2(jsonb_concat, JsonbPGetDatum(options), extra);
}

}  // namespace

Datum WithOption(Jsonb* options, const char* key, int64 value) {
  return WithJsonOption(options, key, psprintf(INT64_FORMAT, value));
}

Datum WithNumberOption(Jsonb* options, const char* key, double value) {
  return WithJsonOption(options, key, psprintf("%.17g", value));
}

}  // namespace dperm::pg

// dperm.check_options(jsonb): validates options and returns them unchanged
// (dp_options builds the object and calls this).
DPERM_FUNCTION(dperm_check_options) {
  Jsonb* options = PG_GETARG_JSONB_P(0);
  dperm::pg::ParseOptionsJsonb(options);
  PG_RETURN_JSONB_P(options);
}

// dperm.option_reference(): the option table (key, SQL type, values,
// default, meaning), the source of docs/sql-reference.md's options table.
DPERM_FUNCTION(dperm_option_reference) {
  using dperm::pg::OptionRow;
  InitMaterializedSRF(fcinfo, 0);
  ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
  dperm::pg::PgBox<std::vector<OptionRow>> rows(CurrentMemoryContext);
  dperm::pg::RunCore([&] { rows.Emplace(dperm::pg::OptionRows()); });
  for (const OptionRow& row : *rows) {
    Datum values[5] = {
        CStringGetTextDatum(row.key.c_str()), CStringGetTextDatum(row.sql_type.c_str()),
        CStringGetTextDatum(row.values.c_str()), CStringGetTextDatum(row.fallback.c_str()),
        CStringGetTextDatum(row.meaning.c_str())};
    bool nulls[5] = {false, false, false, false, false};
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
  }
  return (Datum)0;
}
