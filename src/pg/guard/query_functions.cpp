// The function rule of a query's input (query_functions.hpp).
#include "guard/query_functions.hpp"

extern "C" {
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/typcache.h"
}

namespace dperm::pg {
namespace {

// Built-ins that are IMMUTABLE, not marked LEAKPROOF in PostgreSQL 15's
// pg_proc.dat, and still never raise on any argument (read in
// src/backend/utils/adt/numeric.c, float.c, int.c, int8.c of PG 15), by
// their OIDs (fmgroids.h, generated from pg_proc.dat; fixed per major
// version). A function on this list adds nothing to what the analyst's
// expression may learn beyond its value.
bool ReviewedTotal(Oid fn) {
  switch (fn) {
    // numeric comparisons: cmp_numerics orders NaN and the infinities;
    // no allocation that depends on more than the two values.
    case F_NUMERIC_EQ:
    case F_NUMERIC_NE:
    case F_NUMERIC_LT:
    case F_NUMERIC_LE:
    case F_NUMERIC_GT:
    case F_NUMERIC_GE:
    case F_NUMERIC_CMP:
    // numeric(int2), numeric(int4), numeric(int8): every integer is a
    // numeric; numeric(float8): NaN and +-Infinity are numerics since
    // PostgreSQL 14, any finite double converts exactly enough.
    case F_NUMERIC_INT2:
    case F_NUMERIC_INT4:
    case F_NUMERIC_INT8:
    case F_NUMERIC_FLOAT8:
    // abs and unary minus of a numeric: no rounding, no range limit.
    case F_NUMERIC_ABS:
    case F_NUMERIC_UMINUS:
    // float8(int2), float8(int4), float8(int8), float8(float4): widening
    // (int8 rounds to the nearest double), never out of range.
    case F_FLOAT8_INT2:
    case F_FLOAT8_INT4:
    case F_FLOAT8_INT8:
    case F_FLOAT8_FLOAT4:
    // int8(int2), int8(int4), int4(int2): widening integers.
    case F_INT8_INT2:
    case F_INT8_INT4:
    case F_INT4_INT2:
    // abs and unary minus of float8, abs of float4: a sign bit, never out
    // of range (float8um and float8abs test nothing).
    case F_FLOAT8ABS:
    case F_FLOAT8UM:
    case F_FLOAT4ABS:
    // btfloat8cmp: the total order of float8 (NaN last); GREATEST/LEAST.
    case F_BTFLOAT8CMP: return true;
    default: return false;
  }
}

// The total function that replaces a refused built-in, by its name in
// pg_proc (float8 operators and functions), or nullptr.
const char* TotalReplacement(const char* proname) {
  static const struct {
    const char* builtin;
    const char* total;
  } kReplacements[] = {
      {"float8div", "dperm.div(x, y)"},
      {"float48div", "dperm.div(x, y)"},
      {"float84div", "dperm.div(x, y)"},
      {"int4div", "dperm.div(x, y)"},
      {"int8div", "dperm.div(x, y)"},
      {"numeric_div", "dperm.div(x, y)"},
      {"ln", "dperm.ln(x)"},
      {"dlog1", "dperm.ln(x)"},
      {"log", "dperm.log10(x)"},
      {"log10", "dperm.log10(x)"},
      {"dlog10", "dperm.log10(x)"},
      {"sqrt", "dperm.sqrt(x)"},
      {"dsqrt", "dperm.sqrt(x)"},
      {"float8pl", "dperm.plus(x, y)"},
      {"float8mi", "dperm.minus(x, y)"},
      {"float8mul", "dperm.times(x, y)"},
      {"int4pl", "dperm.plus(x, y)"},
      {"int4mi", "dperm.minus(x, y)"},
      {"int4mul", "dperm.times(x, y)"},
      {"numeric_add", "dperm.plus(x, y)"},
      {"numeric_sub", "dperm.minus(x, y)"},
      {"numeric_mul", "dperm.times(x, y)"},
  };
  for (const auto& r : kReplacements)
    if (strcmp(proname, r.builtin) == 0) return r.total;
  return nullptr;
}

[[noreturn]] void RefuseNode(const char* what, const char* hint) {
  ereport(ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
           errmsg("dperm.train_query cannot train on this query: %s", what),
           errdetail("A private relation is read as its owner, and an error on one row would "
                     "reveal that row: a query may call only immutable functions that cannot fail "
                     "on a value. Nothing was charged."),
           errhint("%s", hint)));
  pg_unreachable();
}

// check_functions_in_node's callback: true (stop) at a refused function.
bool Refused(Oid fn, void* context) {
  if (QueryFunctionAllowed(fn)) return false;
  *static_cast<Oid*>(context) = fn;
  return true;
}

void RefuseFunction(Oid fn) {
  char* name = get_func_name(fn);
  const char* total = name != nullptr ? TotalReplacement(name) : nullptr;
  RefuseNode(
      psprintf("%s can fail on a value or is not immutable and leakproof", format_procedure(fn)),
      total != nullptr
          ? psprintf("Use %s on float8 values: it returns NULL where the operator or "
                     "function would raise.",
                     total)
          : "Use immutable LEAKPROOF functions, comparisons, CASE, COALESCE and dperm's "
            "total functions (dperm.div, dperm.ln, dperm.log10, dperm.sqrt, dperm.plus, "
            "dperm.minus, dperm.times on float8).");
}

bool CheckNode(Node* node, void* context) {
  if (node == nullptr) return false;
  const Query* q = static_cast<const Query*>(context);
  switch (nodeTag(node)) {
    case T_Var: {
      const Var* v = reinterpret_cast<const Var*>(node);
      if (v->varlevelsup != 0 || rt_fetch(v->varno, q->rtable)->rtekind != RTE_RELATION)
        RefuseNode("it reads a column through a join alias",
                   "Name each column by its relation (relation.column).");
      return false;
    }
    case T_Const:
    case T_CaseTestExpr: return false;
    case T_List:
    case T_TargetEntry:
    case T_FromExpr:
    case T_JoinExpr:
    case T_RangeTblRef:
    case T_RelabelType:
    case T_BoolExpr:
    case T_NullTest:
    case T_BooleanTest:
    case T_CoalesceExpr:
    case T_CaseExpr:
    case T_CaseWhen:
    case T_RowExpr:
    case T_ArrayCoerceExpr:  // its element cast is walked below
      break;
    case T_ArrayExpr:
      // ARRAY[ARRAY[...], ...] fails when the inner arrays' shapes differ.
      if (reinterpret_cast<ArrayExpr*>(node)->multidims)
        RefuseNode("it builds a multidimensional array",
                   "Build features as one flat ARRAY[x1, x2, ...].");
      break;
    case T_SubscriptingRef: {
      // An array element or slice: out of range gives NULL, never an error.
      SubscriptingRef* s = reinterpret_cast<SubscriptingRef*>(node);
      if (s->refassgnexpr != nullptr || !OidIsValid(get_element_type(s->refcontainertype)))
        RefuseNode("it subscripts something that is not an array", "Subscript arrays only.");
      break;
    }
    case T_MinMaxExpr: {
      // GREATEST/LEAST run the type's btree comparison.
      TypeCacheEntry* t =
          lookup_type_cache(reinterpret_cast<MinMaxExpr*>(node)->minmaxtype, TYPECACHE_CMP_PROC);
      if (!OidIsValid(t->cmp_proc) || !QueryFunctionAllowed(t->cmp_proc))
        RefuseFunction(t->cmp_proc);
      break;
    }
    case T_FuncExpr:
      if (reinterpret_cast<FuncExpr*>(node)->funcretset)
        RefuseNode("it calls a set-returning function",
                   "A set-returning function duplicates rows.");
      /* FALLTHROUGH */
    case T_OpExpr:
    case T_DistinctExpr:
    case T_NullIfExpr:
    case T_ScalarArrayOpExpr:
    case T_RowCompareExpr: {
      Oid refused = InvalidOid;
      if (check_functions_in_node(node, Refused, &refused)) RefuseFunction(refused);
      break;
    }
    case T_CoerceViaIO:
      RefuseNode("it casts through text (an input function can fail on one value)",
                 "Use casts between numeric types (int to float8), comparisons or CASE instead "
                 "of a cast through text.");
    case T_CoerceToDomain:
      RefuseNode("it casts to a domain (its check can fail on one value)",
                 "Cast to the domain's base type.");
    default:
      RefuseNode(psprintf("it has an expression dperm does not allow (node %d)",
                          static_cast<int>(nodeTag(node))),
                 "Use columns, constants, comparisons, CASE, COALESCE, ARRAY[...] and dperm's "
                 "total functions.");
  }
  return expression_tree_walker(
      node, reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(CheckNode)), context);
}

}  // namespace

bool QueryFunctionAllowed(Oid fn) {
  return func_volatile(fn) == PROVOLATILE_IMMUTABLE &&
         (get_func_leakproof(fn) || ReviewedTotal(fn));
}

void CheckQueryFunctions(Query* q) {
  // Every expression of the query: target list (junk entries too), WHERE
  // and the ON clauses (the join tree). The range table is refused
  // elsewhere where it holds expressions (functions, VALUES, TABLESAMPLE).
  query_tree_walker(q, reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(CheckNode)), q,
                    QTW_IGNORE_RANGE_TABLE);
}

}  // namespace dperm::pg
