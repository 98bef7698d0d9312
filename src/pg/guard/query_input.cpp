// A query as the input of a release (query_input.hpp; docs/design.md
// section 4, "a query is an input with a noisy size"). What makes a query
// a safe input: each row of its one private relation yields at most one
// input row (a filter, per-row expressions, joins to public lookup
// relations on a key unique there), so the input of a table and of its
// neighbour (one row, or one unit, added or removed) differ in at most one
// row (one unit) -- [McS09] (PINQ), stable transformations with
// stability 1 -- and no expression can fail on one row or run code of the
// analyst's choosing with the owner's rights (QueryFunctionRule).
#include "base/citus.hpp"
#include "base/internal_sql.hpp"
#include "guard/query_functions.hpp"
#include "guard/query_input.hpp"
#include "guard/relation_access.hpp"

extern "C" {
#include "access/genam.h"
#include "access/relation.h"
#include "access/sysattr.h"
#include "access/stratnum.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_coerce.h"
#include "parser/parser.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/ruleutils.h"
}

namespace dperm::pg {
namespace {

// The one shape of a refusal: what, why (nothing charged), what to write.
[[noreturn]] void Refuse(int sqlstate, const char* what, const char* hint) {
  ereport(ERROR,
          (errcode(sqlstate), errmsg("dperm.train_query cannot train on this query: %s", what),
           errdetail("A query's input must map each row of one budgeted or protected relation to "
                     "at most one row, through expressions that cannot fail on a value. Nothing "
                     "was charged."),
           errhint("%s", hint)));
  pg_unreachable();
}

// The clauses that combine, duplicate or order rows, each refused.
void CheckClauses(const Query* q) {
  const int k = ERRCODE_FEATURE_NOT_SUPPORTED;
  if (q->commandType != CMD_SELECT || q->utilityStmt != nullptr)
    Refuse(ERRCODE_WRONG_OBJECT_TYPE, "it is not a SELECT", "Pass one SELECT statement.");
  if (q->hasAggs)
    Refuse(k, "it aggregates rows", "Select the rows themselves: the model is their aggregate.");
  if (q->groupClause != NIL || q->groupingSets != NIL || q->havingQual != nullptr)
    Refuse(k, "it has GROUP BY or HAVING", "Select the rows themselves, without grouping.");
  if (q->hasWindowFuncs)
    Refuse(k, "it calls a window function",
           "A window function combines rows; select each row's own values.");
  if (q->distinctClause != NIL)
    Refuse(k, "it has DISTINCT", "Leave DISTINCT out: removing duplicates combines rows.");
  if (q->sortClause != NIL)
    Refuse(k, "it has ORDER BY",
           "Leave ORDER BY out: the release reads the rows in a random order anyway.");
  if (q->limitCount != nullptr || q->limitOffset != nullptr)
    Refuse(
        k, "it has LIMIT or OFFSET",
        "Leave LIMIT and OFFSET out: the release reads a noisy number of rows itself; filter with WHERE.");
  if (q->setOperations != nullptr)
    Refuse(k, "it has UNION, INTERSECT or EXCEPT",
           "Train on one SELECT; UNION ALL duplicates rows.");
  if (q->cteList != NIL || q->hasRecursive)
    Refuse(k, "it has WITH",
           "Write the query without WITH: a common table expression may combine rows.");
  if (q->hasSubLinks)
    Refuse(k, "it has a sub-query",
           "Join a public lookup relation on its key instead of a sub-query.");
  if (q->hasTargetSRFs)
    Refuse(k, "it calls a set-returning function", "A set-returning function duplicates rows.");
  if (q->rowMarks != NIL || q->hasForUpdate)
    Refuse(k, "it has FOR UPDATE or FOR SHARE", "Leave the locking clause out.");
}

// The range table: one private relation, lookups, joins; refuses the rest.
void CheckRangeTable(const Query* q, IsPrivateRelation is_private, QueryInput* out) {
  const int k = ERRCODE_FEATURE_NOT_SUPPORTED;
  out->lookups = static_cast<Oid*>(palloc(sizeof(Oid) * (list_length(q->rtable) + 1)));
  int index = 0;
  ListCell* lc;
  foreach (lc, q->rtable) {
    index++;
    RangeTblEntry* rte = static_cast<RangeTblEntry*>(lfirst(lc));
    switch (rte->rtekind) {
      case RTE_JOIN: continue;
      case RTE_RELATION: break;
      case RTE_SUBQUERY:
        Refuse(k, "it has a sub-query in FROM",
               "Write its filter and expressions in the query itself, on the private relation.");
      case RTE_FUNCTION:
      case RTE_TABLEFUNC:
        Refuse(k, "it has a function in FROM", "Read the private relation and public tables only.");
      case RTE_VALUES:
        Refuse(k, "it has VALUES in FROM", "Read the private relation and public tables only.");
      case RTE_CTE: Refuse(k, "it reads a WITH query", "Write the query without WITH.");
      default:
        Refuse(k, "it reads something that is not a table",
               "Read the private relation and public tables only.");
    }
    const char* name = get_rel_name(rte->relid);
    if (rte->relkind == RELKIND_VIEW)
      Refuse(k, psprintf("%s is a view", name),
             "Write the view's query on its tables in the query you train on (views are not "
             "supported as query inputs yet).");
    if (rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_PARTITIONED_TABLE)
      Refuse(k, psprintf("%s is not a table", name),
             "Read a table or partitioned table (the private relation, and public lookups).");
    if (IsCitusTable(rte->relid))
      Refuse(k, psprintf("%s is a Citus distributed table", name),
             "Train on a distributed table with dperm.train(relation, ...) for now.");
    if (rte->tablesample != nullptr)
      Refuse(k, "it has TABLESAMPLE", "Leave TABLESAMPLE out: the release samples its own rows.");
    if (!is_private(rte->relid)) {
      out->lookups[out->n_lookups++] = rte->relid;
      continue;
    }
    if (out->private_index != 0)
      Refuse(k, "it reads two budgeted or protected relations (or one twice)",
             "Read one private relation; join only public lookup relations on a unique key.");
    out->private_index = index;
    out->relid = rte->relid;
  }
  if (out->private_index == 0)
    Refuse(k, "it reads no budgeted or protected relation",
           "Train on a query of a relation with a budget or protection (a public relation needs "
           "no noisy size: use dp_logreg and the other aggregates on it directly).");
}

// The lookup columns an ON clause equates with expressions over the private
// relation only (or constants), and the equality operator and collation.
struct KeyEquality {
  AttrNumber column;
  Oid op;
  Oid collation;
};

// Whether every Var in `node` is a column of range table entry `index`.
bool OnlyColumnsOf(Node* node, int index) {
  if (node == nullptr) return true;
  List* vars = pull_var_clause(node, PVC_RECURSE_PLACEHOLDERS);
  ListCell* lc;
  foreach (lc, vars)
    if (static_cast<Var*>(lfirst(lc))->varno != index) return false;
  return true;
}

Node* StripRelabel(Node* node) {
  while (node != nullptr && IsA(node, RelabelType))
    node = (Node*)reinterpret_cast<RelabelType*>(node)->arg;
  return node;
}

// Whether the equalities cover every key column of one unique index of
// `lookup` (valid, immediate, not partial, plain columns), each with an
// operator of the index's btree equality and a compatible collation. Then
// each private row matches at most one lookup row.
bool CoversUniqueKey(Oid lookup, const KeyEquality* eq, int n_eq) {
  Relation rel = relation_open(lookup, AccessShareLock);
  List* indexes = RelationGetIndexList(rel);
  relation_close(rel, AccessShareLock);
  ListCell* lc;
  foreach (lc, indexes) {
    Relation index = index_open(lfirst_oid(lc), AccessShareLock);
    Form_pg_index form = index->rd_index;
    bool covered = form->indisunique && form->indimmediate && form->indisvalid &&
                   RelationGetIndexPredicate(index) == NIL &&
                   RelationGetIndexExpressions(index) == NIL;
    for (int i = 0; covered && i < IndexRelationGetNumberOfKeyAttributes(index); i++) {
      bool found = false;
      for (int e = 0; e < n_eq && !found; e++) {
        if (eq[e].column != form->indkey.values[i]) continue;
        if (get_op_opfamily_strategy(eq[e].op, index->rd_opfamily[i]) != BTEqualStrategyNumber)
          continue;
        Oid c = index->rd_indcollation[i];
        found = !OidIsValid(c) || eq[e].collation == c ||
                (OidIsValid(eq[e].collation) && get_collation_isdeterministic(c) &&
                 get_collation_isdeterministic(eq[e].collation));
      }
      covered = found;
    }
    index_close(index, AccessShareLock);
    if (covered) return true;
  }
  return false;
}

// One join: `lookup` (range table entry `index`) joined by `quals`.
void CheckLookupJoin(const Query* q, const QueryInput& in, int index, Node* quals) {
  Oid lookup = rt_fetch(index, q->rtable)->relid;
  List* conjuncts = quals != nullptr ? make_ands_implicit(reinterpret_cast<Expr*>(quals)) : NIL;
  KeyEquality* eq =
      static_cast<KeyEquality*>(palloc(sizeof(KeyEquality) * (list_length(conjuncts) + 1)));
  int n_eq = 0;
  ListCell* lc;
  foreach (lc, conjuncts) {
    Node* c = static_cast<Node*>(lfirst(lc));
    if (!IsA(c, OpExpr) || list_length(reinterpret_cast<OpExpr*>(c)->args) != 2) continue;
    OpExpr* op = reinterpret_cast<OpExpr*>(c);
    for (int side = 0; side < 2; side++) {
      Node* key = StripRelabel(static_cast<Node*>(list_nth(op->args, side)));
      Node* other = static_cast<Node*>(list_nth(op->args, 1 - side));
      if (key == nullptr || !IsA(key, Var)) continue;
      Var* v = reinterpret_cast<Var*>(key);
      if (v->varno != index || v->varattno <= 0 || !OnlyColumnsOf(other, in.private_index))
        continue;
      eq[n_eq++] = {v->varattno, op->opno, op->inputcollid};
      break;
    }
  }
  if (!CoversUniqueKey(lookup, eq, n_eq))
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
           psprintf("the join to %s is not on a unique key of it", get_rel_name(lookup)),
           "Join each lookup relation with ON lookup.key = <expression of the private relation> "
           "for every column of its primary key or of one unique constraint, so that each private "
           "row matches at most one lookup row.");
}

// FROM: the private relation alone, or joined (INNER or LEFT, the lookup on
// the right) to lookups one after another; returns the left-most entry.
int CheckJoinTree(const Query* q, const QueryInput& in, Node* node) {
  const int k = ERRCODE_FEATURE_NOT_SUPPORTED;
  const char* hint =
      "Write FROM private_relation [LEFT] JOIN lookup ON lookup.key = ... [JOIN ...].";
  if (IsA(node, RangeTblRef)) return reinterpret_cast<RangeTblRef*>(node)->rtindex;
  if (!IsA(node, JoinExpr)) Refuse(k, "its FROM clause has an unsupported item", hint);
  JoinExpr* j = reinterpret_cast<JoinExpr*>(node);
  if (j->jointype != JOIN_INNER && j->jointype != JOIN_LEFT)
    Refuse(k, "it has a RIGHT or FULL join", hint);
  if (j->usingClause != NIL || j->isNatural)
    Refuse(k, "it joins with USING or NATURAL", "Write the join condition with ON.");
  if (j->alias != nullptr) Refuse(k, "it names a join with an alias", hint);
  if (!IsA(j->rarg, RangeTblRef) ||
      reinterpret_cast<RangeTblRef*>(j->rarg)->rtindex == in.private_index)
    Refuse(k, "the private relation or a nested join is on the right of a join", hint);
  int left = CheckJoinTree(q, in, j->larg);
  CheckLookupJoin(q, in, reinterpret_cast<RangeTblRef*>(j->rarg)->rtindex, j->quals);
  return left;
}

}  // namespace

QueryInput AnalyseQueryInput(const char* text, IsPrivateRelation is_private) {
  QueryInput out = {};
  List* raw = raw_parser(text, RAW_PARSE_DEFAULT);
  if (list_length(raw) != 1)
    Refuse(ERRCODE_SYNTAX_ERROR, "it is not exactly one statement", "Pass one SELECT statement.");
  RawStmt* stmt = linitial_node(RawStmt, raw);
  if (!IsA(stmt->stmt, SelectStmt))
    Refuse(ERRCODE_WRONG_OBJECT_TYPE, "it is not a SELECT", "Pass one SELECT statement.");
  // As the caller, with the caller's search_path: the names mean what they
  // mean to the analyst (locks each relation, AccessShareLock).
  Query* q = parse_analyze_fixedparams(stmt, text, nullptr, 0, nullptr);
  CheckClauses(q);
  CheckRangeTable(q, is_private, &out);
  out.query = q;
  if (list_length(q->jointree->fromlist) != 1)
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED, "its FROM clause lists several relations",
           "Join lookups with JOIN ... ON lookup.key = ..., not with a comma.");
  if (CheckJoinTree(q, out, static_cast<Node*>(linitial(q->jointree->fromlist))) !=
      out.private_index)
    Refuse(ERRCODE_FEATURE_NOT_SUPPORTED, "the private relation is not the first item of FROM",
           "Write FROM private_relation [LEFT] JOIN lookup ON lookup.key = ....");
  CheckQueryFunctions(q);
  return out;
}

void CheckLookups(const QueryInput& q, Oid caller, Oid reader) {
  for (int i = 0; i < q.n_lookups; i++) {
    Oid l = q.lookups[i];
    if (pg_class_aclcheck(l, caller, ACL_SELECT) != ACLCHECK_OK ||
        pg_class_aclcheck(l, reader, ACL_SELECT) != ACLCHECK_OK)
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
             psprintf("the lookup relation %s is not readable by the caller and the reader",
                      get_rel_name(l)),
             "A lookup relation is public: grant SELECT on it to the analyst and to the private "
             "relation's owner (who reads a protected relation).");
    if (OidIsValid(RowSecurityInFamily(l)))
      Refuse(ERRCODE_FEATURE_NOT_SUPPORTED,
             psprintf("the lookup relation %s has row-level security", get_rel_name(l)),
             "A lookup relation is public: join one without row-level security.");
  }
}

namespace {

// The output column of `q` named `name` (exactly one), or 42703.
TargetEntry* OutputColumn(const Query* q, const char* name) {
  TargetEntry* found = nullptr;
  ListCell* lc;
  foreach (lc, q->targetList) {
    TargetEntry* t = static_cast<TargetEntry*>(lfirst(lc));
    if (t->resjunk || t->resname == nullptr || strcmp(t->resname, name) != 0) continue;
    if (found != nullptr)
      Refuse(ERRCODE_AMBIGUOUS_COLUMN, psprintf("it has two output columns named \"%s\"", name),
             "Name each output column once (SELECT ... AS name).");
    found = t;
  }
  if (found == nullptr || strcmp(name, kQueryUnitColumn) == 0)
    Refuse(ERRCODE_UNDEFINED_COLUMN, psprintf("it has no output column \"%s\"", name),
           "features and label name output columns of the query (SELECT ARRAY[...] AS features, "
           "... AS label); dperm_unit is reserved.");
  return found;
}

}  // namespace

void QueryColumnTypes(const QueryInput& q, const char* features, const char* label,
                      Oid* features_type, Oid* label_type) {
  if (strcmp(features, label) == 0)
    Refuse(ERRCODE_INVALID_PARAMETER_VALUE, "features and label name the same column",
           "Name two output columns.");
  *features_type = exprType(reinterpret_cast<Node*>(OutputColumn(q.query, features)->expr));
  *label_type = exprType(reinterpret_cast<Node*>(OutputColumn(q.query, label)->expr));
  // Arrays whose cast to float8[] cannot fail on a value (numeric[] can: a
  // value beyond float8's range).
  Oid f = *features_type;
  if (f != FLOAT8ARRAYOID && f != FLOAT4ARRAYOID && f != INT2ARRAYOID && f != INT4ARRAYOID &&
      f != INT8ARRAYOID)
    Refuse(ERRCODE_DATATYPE_MISMATCH,
           psprintf("its features column \"%s\" has type %s", features, format_type_be(f)),
           "Select features as float8[] (ARRAY[x1, x2, ...] of float8, float4 or integer values).");
}

Expr* QueryOutputExpr(const QueryInput& q, const char* name) {
  return OutputColumn(q.query, name)->expr;
}

char* CanonicalQueryText(const QueryInput& in, const char* features, const char* label,
                         const char* unit_column, Expr* filter) {
  Query* q = static_cast<Query*>(copyObjectImpl(in.query));
  // A group's rows (dperm.train_query_groups): the filter ANDed into WHERE,
  // so the group's input is the query's rows whose key equals the group's.
  if (filter != nullptr)
    q->jointree->quals =
        make_and_qual(q->jointree->quals, static_cast<Node*>(copyObjectImpl(filter)));
  TargetEntry* f = static_cast<TargetEntry*>(copyObjectImpl(OutputColumn(q, features)));
  TargetEntry* l = static_cast<TargetEntry*>(copyObjectImpl(OutputColumn(q, label)));
  // The unit of each input row: the private relation's unit column, or,
  // for the row unit, the row's own identity -- ROW(tableoid, ctid), unique
  // across the partitions of the relation for the statement's snapshot --
  // so that the unit path (UnitCountFrom, UnitBoundedSource) counts and
  // samples the rows themselves, one slot each (k = 1).
  Expr* unit;
  const int p = in.private_index;
  if (unit_column != nullptr) {
    AttrNumber a = get_attnum(in.relid, unit_column);
    Oid type, collation;
    int32 typmod;
    get_atttypetypmodcoll(in.relid, a, &type, &typmod, &collation);
    unit = reinterpret_cast<Expr*>(makeVar(p, a, type, typmod, collation, 0));
  } else {
    RowExpr* row = makeNode(RowExpr);
    row->args = list_make2(makeVar(p, TableOidAttributeNumber, OIDOID, -1, InvalidOid, 0),
                           makeVar(p, SelfItemPointerAttributeNumber, TIDOID, -1, InvalidOid, 0));
    row->row_typeid = RECORDOID;
    row->row_format = COERCE_IMPLICIT_CAST;
    row->location = -1;
    unit = reinterpret_cast<Expr*>(row);
  }
  // Features as float8[] (QueryColumnTypes allows only arrays whose cast
  // cannot fail), the type the read and its dummy rows use.
  Oid ftype = exprType(reinterpret_cast<Node*>(f->expr));
  if (ftype != FLOAT8ARRAYOID)
    f->expr = reinterpret_cast<Expr*>(
        coerce_to_target_type(nullptr, reinterpret_cast<Node*>(f->expr), ftype, FLOAT8ARRAYOID, -1,
                              COERCION_EXPLICIT, COERCE_EXPLICIT_CAST, -1));
  f->resno = 1;
  l->resno = 2;
  q->targetList = list_make3(f, l, makeTargetEntry(unit, 3, pstrdup(kQueryUnitColumn), false));
  // Deparsed under the internal settings: a name is qualified unless
  // pg_catalog, pg_temp resolves it to the same object, and a constant is
  // written as the pinned settings read it back.
  int level = PinInternalSettings();
  char* sql = pg_get_querydef(q, false);
  AtEOXact_GUC(true, level);
  return sql;
}

char* CanonicalQuerySource(const QueryInput& in) {
  // As CanonicalQueryText, without the columns it chooses: the query as
  // analysed, every name qualified unless the pinned path finds it.
  int level = PinInternalSettings();
  char* sql = pg_get_querydef(static_cast<Query*>(copyObjectImpl(in.query)), false);
  AtEOXact_GUC(true, level);
  return sql;
}

}  // namespace dperm::pg
