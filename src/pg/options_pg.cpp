// Options: jsonb -> OptionEntry list -> core validation, and dp_options'
// checker.
#include "dperm/options/options.hpp"

#include "options_pg.hpp"

extern "C" {
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/numeric.h"
}

namespace dperm::pg {
namespace {

char* TextOf(const JsonbValue& v) {
  return pnstrdup(v.val.string.val, v.val.string.len);
}

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
      e->number = DatumGetFloat8(DirectFunctionCall1(
          numeric_float8_no_overflow, NumericGetDatum(v.val.numeric)));
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
          const char** names = static_cast<const char**>(
              palloc0(sizeof(char*) * (list_length(items) + 1)));
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
          if (v.type == jbvString)
            items = lappend(items, TextOf(v));
          else
            current->kind = OptionEntry::Kind::kOther;
        }
        break;
      default: break;
    }
  }
  *count = n;
  return entries;
}

}  // namespace

char* JsonbText(Jsonb* value) {
  return JsonbToCString(nullptr, &value->root, VARSIZE(value));
}

ParsedOptions ParseOptionsJsonb(Jsonb* options) {
  int count = 0;
  OptionEntry* entries = ReadEntries(options, &count);
  ParsedOptions parsed;
  RunCore([&] { parsed.options = ParseOptions(entries, count); });
  for (int i = 0; i < count; i++) {
    if (strcmp(entries[i].key, "dataset") == 0 && entries[i].text != nullptr)
      parsed.dataset = entries[i].text;
    if (strcmp(entries[i].key, "feature_names") == 0)
      parsed.feature_names = entries[i].items;
  }
  return parsed;
}

LossKind ParseLossName(const char* name) {
  if (strcmp(name, "logistic") == 0) return LossKind::kLogistic;
  if (strcmp(name, "huber") == 0) return LossKind::kHuber;
  if (strcmp(name, "softmax") == 0) return LossKind::kSoftmax;
  ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                  errmsg("unknown loss \"%s\"", name),
                  errhint("Valid losses: logistic, huber, softmax.")));
  pg_unreachable();
}

}  // namespace dperm::pg

// dperm.check_options(jsonb): validates options and returns them unchanged
// (dp_options builds the object and calls this).
DPERM_FUNCTION(dperm_check_options) {
  Jsonb* options = PG_GETARG_JSONB_P(0);
  dperm::pg::ParseOptionsJsonb(options);
  PG_RETURN_JSONB_P(options);
}
