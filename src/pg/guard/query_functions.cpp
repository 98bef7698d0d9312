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

// Time (docs/design.md section 4, "one row's time is bounded"): every
// function allowed here, every LEAKPROOF built-in of PostgreSQL 15 and every
// node CheckNode allows takes time linear in the bytes of its arguments
// (comparisons stop at the shorter value; casts and abs copy; the hashes
// md5/sha* read each byte once; a numeric has at most 147 455 digits), and
// none returns more bytes than it reads, so one row of w bytes moves one
// evaluation by about c w per reference to its columns in the query
// (bench/reports/expression_time.md measures c). Nothing super-linear
// (repeat, lpad, power, exp, LIKE, regular expressions) is LEAKPROOF or on
// this list; a function added here must keep that.
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
    // abs and unary minus of a numeric: no rounding, no range limit
    // (abs(numeric) is numeric_abs under the name the SQL calls).
    case F_NUMERIC_ABS:
    case F_ABS_NUMERIC:
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
    // of range (float8um and float8abs test nothing; abs(float8) and
    // abs(float4) are float8abs and float4abs under the name SQL calls).
    case F_FLOAT8ABS:
    case F_ABS_FLOAT8:
    case F_FLOAT8UM:
    case F_FLOAT4ABS:
    case F_ABS_FLOAT4:
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

// What the walker checks and for whom: train_query's parsed query, whose
// columns must name a relation, or a planned statement's per-row
// expressions (`query` nullptr), whose columns are the plan's.
struct RuleContext {
  const Query* query;
  const char* who;    // dperm.train_query, or the aggregate's name
  const char* input;  // "this query", "this input"
  const char* view;   // the view whose body `query` is, or nullptr
};

[[noreturn]] void RefuseNode(const RuleContext* rule, const char* what, const char* hint) {
  ereport(ERROR,
          (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
           errmsg("%s cannot train on %s: %s", rule->who, rule->input, InView(rule->view, what)),
           rule->query != nullptr
               ? errdetail("A private relation is read as its owner, and an error on one row "
                           "would reveal that row: a query may call only immutable functions "
                           "that cannot fail on a value. Nothing was charged.")
               : errdetail("An error on one row of a budgeted or protected relation would reveal "
                           "that row: what a training aggregate evaluates per row may call only "
                           "immutable functions that cannot fail on a value. Nothing was "
                           "charged."),
           errhint("%s", hint)));
  pg_unreachable();
}

// check_functions_in_node's callback: true (stop) at a refused function.
bool Refused(Oid fn, void* context) {
  if (QueryFunctionAllowed(fn)) return false;
  *static_cast<Oid*>(context) = fn;
  return true;
}

void RefuseFunction(const RuleContext* rule, Oid fn) {
  char* name = get_func_name(fn);
  const char* total = name != nullptr ? TotalReplacement(name) : nullptr;
  const char* what =
      psprintf("%s can fail on a value or is not immutable and leakproof", format_procedure(fn));
  // numeric to float8 or float4 (numeric[] to float8[] too): out of range
  // beyond 1e308, so a numeric column cannot be read as float8 on one row's
  // terms; no total function can help.
  if (fn == F_FLOAT8_NUMERIC || fn == F_FLOAT4_NUMERIC)
    RefuseNode(rule, what,
               "Store the values as float8 (ALTER TABLE ... ALTER COLUMN ... TYPE float8 or "
               "float8[]), or build them as float8 (ARRAY[...]::float8[]).");
  RefuseNode(rule, what,
             total != nullptr
                 ? psprintf("Use %s on float8 values: it returns NULL where the operator or "
                            "function would raise.",
                            total)
                 : "Use immutable LEAKPROOF functions, comparisons, CASE, COALESCE and dperm's "
                   "total functions (dperm.div, dperm.ln, dperm.log10, dperm.sqrt, dperm.plus, "
                   "dperm.minus, dperm.times on float8).");
}

// The walker of both checks: true never (it refuses by raising).
bool CheckNode(Node* node, void* context) {
  if (node == nullptr) return false;
  const RuleContext* rule = static_cast<const RuleContext*>(context);
  const Query* q = rule->query;
  switch (nodeTag(node)) {
    case T_Var: {
      // A planned expression's columns are its plan's (OUTER_VAR, a scan's
      // relation): a value read, nothing run. A query's are a relation's,
      // or a view's inlined (query_views.hpp: any other sub-query in FROM
      // is refused before this walk).
      const Var* v = reinterpret_cast<const Var*>(node);
      const RTEKind kind =
          q == nullptr || v->varlevelsup != 0 ? RTE_JOIN : rt_fetch(v->varno, q->rtable)->rtekind;
      if (q != nullptr && kind != RTE_RELATION && kind != RTE_SUBQUERY)
        RefuseNode(rule, "it reads a column through a join alias",
                   "Name each column by its relation (relation.column).");
      return false;
    }
    case T_Param:
      // A statement's parameter ($1) is the same for every row; one an
      // outer plan node sets per row (PARAM_EXEC) is not.
      if (reinterpret_cast<Param*>(node)->paramkind != PARAM_EXTERN)
        RefuseNode(rule, "it reads a value another part of the statement computes per row",
                   "Use columns, constants and parameters.");
      return false;
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
        RefuseNode(rule, "it builds a multidimensional array",
                   "Build features as one flat ARRAY[x1, x2, ...].");
      break;
    case T_SubscriptingRef: {
      // An array element or slice: out of range gives NULL, never an error.
      SubscriptingRef* s = reinterpret_cast<SubscriptingRef*>(node);
      if (s->refassgnexpr != nullptr || !OidIsValid(get_element_type(s->refcontainertype)))
        RefuseNode(rule, "it subscripts something that is not an array", "Subscript arrays only.");
      break;
    }
    case T_MinMaxExpr: {
      // GREATEST/LEAST run the type's btree comparison.
      TypeCacheEntry* t =
          lookup_type_cache(reinterpret_cast<MinMaxExpr*>(node)->minmaxtype, TYPECACHE_CMP_PROC);
      if (!OidIsValid(t->cmp_proc) || !QueryFunctionAllowed(t->cmp_proc))
        RefuseFunction(rule, t->cmp_proc);
      break;
    }
    case T_FuncExpr:
      if (reinterpret_cast<FuncExpr*>(node)->funcretset)
        RefuseNode(rule, "it calls a set-returning function",
                   "A set-returning function duplicates rows.");
      /* FALLTHROUGH */
    case T_OpExpr:
    case T_DistinctExpr:
    case T_NullIfExpr:
    case T_ScalarArrayOpExpr:
    case T_RowCompareExpr: {
      Oid refused = InvalidOid;
      if (check_functions_in_node(node, Refused, &refused)) RefuseFunction(rule, refused);
      break;
    }
    case T_CoerceViaIO:
      RefuseNode(rule, "it casts through text (an input function can fail on one value)",
                 "Use casts between numeric types (int to float8), comparisons or CASE instead "
                 "of a cast through text.");
    case T_CoerceToDomain:
      RefuseNode(rule, "it casts to a domain (its check can fail on one value)",
                 "Cast to the domain's base type.");
    default:
      RefuseNode(rule,
                 psprintf("it has an expression dperm does not allow (node %d)",
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

void CheckQueryFunctions(Query* q, const char* view) {
  // Every expression of the query: target list (junk entries too), WHERE
  // and the ON clauses (the join tree). The range table is refused
  // elsewhere where it holds expressions (functions, VALUES, TABLESAMPLE);
  // a view's body there is walked on its own (query_input.cpp).
  RuleContext rule = {q, "dperm.train_query", "this query", view};
  query_tree_walker(q, reinterpret_cast<bool (*)()>(reinterpret_cast<void (*)()>(CheckNode)), &rule,
                    QTW_IGNORE_RANGE_TABLE);
}

void CheckExpressionFunctions(Node* expr, const char* who) {
  RuleContext rule = {nullptr, who, "this input", nullptr};
  CheckNode(expr, &rule);
}

const char* InView(const char* view, const char* what) {
  if (view == nullptr) return what;
  return psprintf("the view %s is not an allowed input: %s", view, what);
}

}  // namespace dperm::pg
