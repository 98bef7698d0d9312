// The declared groups of dperm.train_query_groups (query_groups.hpp). Why
// the checks: parallel composition ([McS09], Thm 4) needs each input row in
// at most one group, whatever the data. A row's key k falls in group i when
// k = key_i under the type's default equality (an opclass's: reflexive,
// symmetric, transitive), so keys pairwise unequal under that same
// equality put no row in two groups. The domain and its order are the
// caller's declaration only, so the set of groups released never depends
// on the data.
#include "guard/query_functions.hpp"
#include "guard/query_groups.hpp"

extern "C" {
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "utils/typcache.h"
}

namespace dperm::pg {
namespace {

[[noreturn]] void RefuseGroups(int sqlstate, const char* what, const char* hint) {
  ereport(ERROR, (errcode(sqlstate), errmsg("dperm.train_query_groups: %s", what),
                  errdetail("The groups are a declared public domain: a JSON array of distinct "
                            "keys of the group_by column's type. Nothing was charged."),
                  errhint("%s", hint)));
  pg_unreachable();
}

// The text of one element of the groups array (a string, a number or a
// boolean), or a refusal.
const char* KeyText(const JsonbValue& v) {
  switch (v.type) {
    case jbvString: return pnstrdup(v.val.string.val, v.val.string.len);
    case jbvNumeric:
      return DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
    case jbvBool: return v.val.boolean ? "true" : "false";
    case jbvNull:
      RefuseGroups(ERRCODE_INVALID_PARAMETER_VALUE, "groups declares a NULL key",
                   "Rows whose key is NULL drop out (each group's noisy count covers them); "
                   "declare only non-NULL keys.");
    default:
      RefuseGroups(ERRCODE_INVALID_PARAMETER_VALUE, "groups holds an array or an object",
                   "Declare each key as a JSON string, number or boolean.");
  }
}

// `text` cast to `type` by its input function as the caller, or the input
// function's error restated (its SQLSTATE kept).
Datum CastKey(const char* text, Oid type, const char* column) {
  Oid input, ioparam;
  getTypeInputInfo(type, &input, &ioparam);
  Datum value = (Datum)0;
  ErrorData* e = CallPostgresCatching(
      [&] { value = OidInputFunctionCall(input, const_cast<char*>(text), ioparam, -1); });
  // Only a data exception (class 22: the text is not a value of the type)
  // is restated; anything else (a cancel, out of memory) is raised as it was.
  if (e != nullptr && ERRCODE_TO_CATEGORY(e->sqlerrcode) != ERRCODE_DATA_EXCEPTION) ReThrowError(e);
  if (e != nullptr)
    ereport(ERROR,
            (errcode(e->sqlerrcode),
             errmsg("dperm.train_query_groups: the group key \"%s\" is not a value of type "
                    "%s (the type of the query's output column \"%s\")",
                    text, format_type_be(type), column),
             errdetail("The type's input function says: %s. Nothing was charged.", e->message),
             errhint("Declare keys that cast to the column's type, or cast the column in "
                     "the query (for example region::text AS region).")));
  return value;
}

}  // namespace

QueryGroups AnalyseQueryGroups(const QueryInput& q, const char* group_by, Jsonb* groups) {
  QueryGroups g = {};
  g.column = group_by;
  const Expr* e = QueryOutputExpr(q, group_by);
  g.type = exprType(reinterpret_cast<const Node*>(e));
  g.collation = exprCollation(reinterpret_cast<const Node*>(e));
  const char t = get_typtype(g.type);
  if (t != TYPTYPE_BASE && t != TYPTYPE_ENUM)
    RefuseGroups(ERRCODE_FEATURE_NOT_SUPPORTED,
                 psprintf("the group_by column \"%s\" has type %s, not a base or enum type",
                          group_by, format_type_be(g.type)),
                 "Group by a column of a base type (text, an integer, a date, ...): cast it in "
                 "the query.");
  TypeCacheEntry* tc = lookup_type_cache(g.type, TYPECACHE_EQ_OPR);
  g.eq_operator = tc->eq_opr;
  if (!OidIsValid(g.eq_operator) || !QueryFunctionAllowed(get_opcode(g.eq_operator)))
    RefuseGroups(ERRCODE_FEATURE_NOT_SUPPORTED,
                 psprintf("the group_by column \"%s\" has type %s, whose equality is missing or "
                          "can fail on a value or is not immutable and leakproof",
                          group_by, format_type_be(g.type)),
                 "Group by a column of a type with a leakproof equality (text, an integer, a "
                 "date, ...): cast it in the query.");
  if (!JB_ROOT_IS_ARRAY(groups) || JB_ROOT_IS_SCALAR(groups))
    RefuseGroups(ERRCODE_INVALID_PARAMETER_VALUE, "groups is not a JSON array",
                 "Declare the groups as a JSON array of keys, for example '[\"EU\", \"US\"]'.");
  const uint32 size = JsonContainerSize(&groups->root);
  if (size == 0)
    RefuseGroups(ERRCODE_INVALID_PARAMETER_VALUE, "groups declares no key",
                 "Declare at least one key.");
  if (size > static_cast<uint32>(kMaxGroups))
    RefuseGroups(ERRCODE_PROGRAM_LIMIT_EXCEEDED,
                 psprintf("groups declares %u keys, more than %d", size, kMaxGroups),
                 psprintf("Declare at most %d groups per statement.", kMaxGroups));
  g.n = static_cast<int>(size);
  g.keys = static_cast<Datum*>(palloc(sizeof(Datum) * g.n));
  g.texts = static_cast<const char**>(palloc(sizeof(char*) * g.n));
  const char** declared = static_cast<const char**>(palloc(sizeof(char*) * g.n));
  Oid output;
  bool varlena;
  getTypeOutputInfo(g.type, &output, &varlena);
  for (int i = 0; i < g.n; i++) {
    JsonbValue* v = getIthJsonbValueFromContainer(&groups->root, static_cast<uint32>(i));
    declared[i] = KeyText(*v);
    g.keys[i] = CastKey(declared[i], g.type, group_by);
    g.texts[i] = OidOutputFunctionCall(output, g.keys[i]);
  }
  // Pairwise distinct under the column's equality (at most 1000 keys): a
  // row equal to two keys would fall in two groups.
  const Oid eq = get_opcode(g.eq_operator);
  for (int i = 1; i < g.n; i++)
    for (int j = 0; j < i; j++)
      if (DatumGetBool(OidFunctionCall2Coll(eq, g.collation, g.keys[j], g.keys[i])))
        RefuseGroups(ERRCODE_INVALID_PARAMETER_VALUE,
                     psprintf("groups declares the key \"%s\" twice (as \"%s\" and \"%s\")",
                              g.texts[i], declared[j], declared[i]),
                     "Declare each key once: each row falls in at most one group.");
  return g;
}

Expr* GroupFilter(const QueryInput& q, const QueryGroups& g, int i) {
  Expr* column = static_cast<Expr*>(copyObjectImpl(QueryOutputExpr(q, g.column)));
  int16 len;
  bool byval;
  get_typlenbyval(g.type, &len, &byval);
  Const* key = makeConst(g.type, -1, g.collation, len, g.keys[i], false, byval);
  return make_opclause(g.eq_operator, BOOLOID, false, column, reinterpret_cast<Expr*>(key),
                       InvalidOid, g.collation);
}

uint64 GroupSeed(uint64 seed, int i) {
  return seed + static_cast<uint64>(i + 1) * UINT64CONST(0x9E3779B97F4A7C15);
}

void RefuseUnitGroups(const char* who, const char* one_by_one, const char* relation,
                      const char* unit_column) {
  ereport(ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
           errmsg("%s cannot group a relation with a privacy unit: %s counts privacy per %s", who,
                  relation, unit_column),
           errdetail("A unit's rows may fall in several groups, so the groups do not compose in "
                     "parallel at the unit. Nothing was charged."),
           errhint("Release each group with %s (each release is charged), or group a relation "
                   "whose budget names no unit.",
                   one_by_one)));
}

}  // namespace dperm::pg
