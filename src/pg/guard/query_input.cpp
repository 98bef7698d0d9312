// A query as the input of a release (query_input.hpp; docs/design.md
// section 4, "a query is an input with a noisy size"). What makes a query
// a safe input: each row of its one private relation yields at most one
// input row (a filter, per-row expressions, joins to public lookup
// relations on a key unique there), so the input of a table and of its
// neighbour (one row, or one unit, added or removed) differ in at most one
// row (one unit) -- [McS09] (PINQ), stable transformations with
// stability 1 -- and no expression can fail on one row or run code of the
// analyst's choosing with the owner's rights (QueryFunctionRule). A view
// in FROM is inlined and held to the same rules, level by level
// (query_views.hpp).
#include "base/citus.hpp"
#include "base/internal_sql.hpp"
#include "guard/query_functions.hpp"
#include "guard/query_input.hpp"
#include "guard/query_views.hpp"
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

// One level of the input: the query itself, or the body of a view it reads
// (through other views, `active`, which a view may not read again).
struct Level {
  IsPrivateRelation is_private;
  Oid view;               // InvalidOid: the query itself
  const char* view_name;  // nullptr: the query itself
  List* active;           // the views being inlined, outermost first
};

// The one shape of a refusal: what (in which view), why (nothing charged),
// what to write.
[[noreturn]] void Refuse(const Level& level, int sqlstate, const char* what, const char* hint) {
  ereport(
      ERROR,
      (errcode(sqlstate),
       errmsg("dperm.train_query cannot train on this query: %s", InView(level.view_name, what)),
       errdetail("A query's input must map each row of one budgeted or protected relation to "
                 "at most one row, through expressions that cannot fail on a value. Nothing "
                 "was charged."),
       errhint("%s%s", hint,
               level.view_name != nullptr
                   ? " A view the query reads must follow the rules of a query itself."
                   : "")));
  pg_unreachable();
}

// A refusal about the query itself (its columns, its lookups).
[[noreturn]] void Refuse(int sqlstate, const char* what, const char* hint) {
  Refuse(Level{nullptr, InvalidOid, nullptr, NIL}, sqlstate, what, hint);
}

// The clauses that combine, duplicate or order rows, each refused.
void CheckClauses(const Query* q, const Level& level) {
  const int k = ERRCODE_FEATURE_NOT_SUPPORTED;
  if (q->commandType != CMD_SELECT || q->utilityStmt != nullptr)
    Refuse(level, ERRCODE_WRONG_OBJECT_TYPE, "it is not a SELECT", "Pass one SELECT statement.");
  if (q->hasAggs)
    Refuse(level, k, "it aggregates rows",
           "Select the rows themselves: the model is their aggregate.");
  if (q->groupClause != NIL || q->groupingSets != NIL || q->havingQual != nullptr)
    Refuse(level, k, "it has GROUP BY or HAVING", "Select the rows themselves, without grouping.");
  if (q->hasWindowFuncs)
    Refuse(level, k, "it calls a window function",
           "A window function combines rows; select each row's own values.");
  if (q->distinctClause != NIL)
    Refuse(level, k, "it has DISTINCT", "Leave DISTINCT out: removing duplicates combines rows.");
  if (q->sortClause != NIL)
    Refuse(level, k, "it has ORDER BY",
           "Leave ORDER BY out: the release reads the rows in a random order anyway.");
  if (q->limitCount != nullptr || q->limitOffset != nullptr)
    Refuse(
        level, k, "it has LIMIT or OFFSET",
        "Leave LIMIT and OFFSET out: the release reads a noisy number of rows itself; filter with WHERE.");
  if (q->setOperations != nullptr)
    Refuse(level, k, "it has UNION, INTERSECT or EXCEPT",
           "Train on one SELECT; UNION ALL duplicates rows.");
  if (q->cteList != NIL || q->hasRecursive)
    Refuse(level, k, "it has WITH",
           "Write the query without WITH: a common table expression may combine rows.");
  if (q->hasSubLinks)
    Refuse(level, k, "it has a sub-query",
           "Join a public lookup relation on its key instead of a sub-query.");
  if (q->hasTargetSRFs)
    Refuse(level, k, "it calls a set-returning function",
           "A set-returning function duplicates rows.");
  if (q->rowMarks != NIL || q->hasForUpdate)
    Refuse(level, k, "it has FOR UPDATE or FOR SHARE", "Leave the locking clause out.");
}

int AnalyseLevel(Query* q, const Level& level, QueryInput* out);

// A view in FROM (range table entry `index` of `q`, at `level`): its body
// inlined and validated as a level of its own, which must read the private
// relation; `out`'s path to it then starts here.
void InlineCheckedView(Query* q, int index, const Level& level, QueryInput* out) {
  RangeTblEntry* rte = rt_fetch(index, q->rtable);
  const char* name = get_rel_name(rte->relid);
  if (list_member_oid(level.active, rte->relid))
    Refuse(level, ERRCODE_FEATURE_NOT_SUPPORTED, psprintf("the view %s reads itself", name),
           "Replace the view with one that does not read itself.");
  Level inner = {level.is_private, rte->relid, name,
                 lappend_oid(list_copy(level.active), rte->relid)};
  Query* body = InlineView(rte, &out->views);
  AnalyseLevel(body, inner, out);
  out->private_path = lcons_int(index, out->private_path);
}

// The range table: one private relation (or a view over it), lookups,
// joins; refuses the rest. Returns the private relation's (or view's) index.
int CheckRangeTable(Query* q, const Level& level, QueryInput* out) {
  const int k = ERRCODE_FEATURE_NOT_SUPPORTED;
  const int n = list_length(q->rtable);
  int private_index = 0;
  for (int index = 1; index <= n; index++) {
    RangeTblEntry* rte = rt_fetch(index, q->rtable);
    switch (rte->rtekind) {
      case RTE_JOIN: continue;
      case RTE_RELATION: break;
      case RTE_SUBQUERY:
        Refuse(level, k, "it has a sub-query in FROM",
               "Write its filter and expressions in the query itself, on the private relation, "
               "or read a view of it.");
      case RTE_FUNCTION:
      case RTE_TABLEFUNC:
        Refuse(level, k, "it has a function in FROM",
               "Read the private relation and public tables only.");
      case RTE_VALUES:
        Refuse(level, k, "it has VALUES in FROM",
               "Read the private relation and public tables only.");
      case RTE_CTE: Refuse(level, k, "it reads a WITH query", "Write the query without WITH.");
      default:
        Refuse(level, k, "it reads something that is not a table",
               "Read the private relation and public tables only.");
    }
    // A view's body keeps the view itself as its *OLD* and *NEW* entries
    // (PostgreSQL 15), outside its FROM clause: nothing is read there.
    if (OidIsValid(level.view) && index <= PRS2_NEW_VARNO && rte->relid == level.view) continue;
    const char* name = get_rel_name(rte->relid);
    if (rte->tablesample != nullptr)
      Refuse(level, k, "it has TABLESAMPLE",
             "Leave TABLESAMPLE out: the release samples its own rows.");
    if (rte->relkind == RELKIND_VIEW) {
      if (private_index != 0)
        Refuse(level, k, psprintf("it reads the view %s beside the private relation", name),
               "Read one private relation or one view of it; join only public lookup tables on "
               "a unique key.");
      InlineCheckedView(q, index, level, out);
      private_index = index;
      continue;
    }
    if (rte->relkind != RELKIND_RELATION && rte->relkind != RELKIND_PARTITIONED_TABLE)
      Refuse(level, k, psprintf("%s is not a table", name),
             "Read a table or partitioned table (the private relation, and public lookups), or "
             "a view of the private relation.");
    if (IsCitusTable(rte->relid))
      Refuse(level, k, psprintf("%s is a Citus distributed table", name),
             "Train on a distributed table with dperm.train(relation, ...) for now.");
    if (!level.is_private(rte->relid)) {
      out->lookups = lappend_oid(out->lookups, rte->relid);
      continue;
    }
    if (private_index != 0)
      Refuse(level, k, "it reads two budgeted or protected relations (or one twice)",
             "Read one private relation; join only public lookup relations on a unique key.");
    private_index = index;
    out->relid = rte->relid;
    out->private_rte = rte;
    out->private_path = list_make1_int(index);
  }
  if (private_index == 0)
    Refuse(level, k, "it reads no budgeted or protected relation",
           level.view_name != nullptr
               ? "A view in the query must read the private relation; join public tables, not "
                 "views of them, as lookups."
               : "Train on a query of a relation with a budget or protection (a public relation "
                 "needs no noisy size: use dp_logreg and the other aggregates on it directly).");
  return private_index;
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
void CheckLookupJoin(const Query* q, int private_index, const Level& level, int index,
                     Node* quals) {
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
      if (v->varno != index || v->varattno <= 0 || !OnlyColumnsOf(other, private_index)) continue;
      eq[n_eq++] = {v->varattno, op->opno, op->inputcollid};
      break;
    }
  }
  if (!CoversUniqueKey(lookup, eq, n_eq))
    Refuse(level, ERRCODE_FEATURE_NOT_SUPPORTED,
           psprintf("the join to %s is not on a unique key of it", get_rel_name(lookup)),
           "Join each lookup relation with ON lookup.key = <expression of the private relation> "
           "for every column of its primary key or of one unique constraint, so that each private "
           "row matches at most one lookup row.");
}

// FROM: the private relation alone, or joined (INNER or LEFT, the lookup on
// the right) to lookups one after another; returns the left-most entry.
int CheckJoinTree(const Query* q, int private_index, const Level& level, Node* node) {
  const int k = ERRCODE_FEATURE_NOT_SUPPORTED;
  const char* hint =
      "Write FROM private_relation [LEFT] JOIN lookup ON lookup.key = ... [JOIN ...].";
  if (IsA(node, RangeTblRef)) return reinterpret_cast<RangeTblRef*>(node)->rtindex;
  if (!IsA(node, JoinExpr)) Refuse(level, k, "its FROM clause has an unsupported item", hint);
  JoinExpr* j = reinterpret_cast<JoinExpr*>(node);
  if (j->jointype != JOIN_INNER && j->jointype != JOIN_LEFT)
    Refuse(level, k, "it has a RIGHT or FULL join", hint);
  if (j->usingClause != NIL || j->isNatural)
    Refuse(level, k, "it joins with USING or NATURAL", "Write the join condition with ON.");
  if (j->alias != nullptr) Refuse(level, k, "it names a join with an alias", hint);
  if (!IsA(j->rarg, RangeTblRef) ||
      reinterpret_cast<RangeTblRef*>(j->rarg)->rtindex == private_index)
    Refuse(level, k, "the private relation or a nested join is on the right of a join", hint);
  int left = CheckJoinTree(q, private_index, level, j->larg);
  CheckLookupJoin(q, private_index, level, reinterpret_cast<RangeTblRef*>(j->rarg)->rtindex,
                  j->quals);
  return left;
}

// One level (the query, or a view's body): its clauses, its range table
// (views inlined and validated first, innermost first), its FROM clause and
// its expressions. Returns the private relation's (or view's) index.
int AnalyseLevel(Query* q, const Level& level, QueryInput* out) {
  CheckClauses(q, level);
  const int private_index = CheckRangeTable(q, level, out);
  if (list_length(q->jointree->fromlist) != 1)
    Refuse(level, ERRCODE_FEATURE_NOT_SUPPORTED, "its FROM clause lists several relations",
           "Join lookups with JOIN ... ON lookup.key = ..., not with a comma.");
  if (CheckJoinTree(q, private_index, level, static_cast<Node*>(linitial(q->jointree->fromlist))) !=
      private_index)
    Refuse(level, ERRCODE_FEATURE_NOT_SUPPORTED,
           "the private relation is not the first item of FROM",
           "Write FROM private_relation [LEFT] JOIN lookup ON lookup.key = ....");
  CheckQueryFunctions(q, level.view_name);
  return private_index;
}

}  // namespace

QueryInput AnalyseQueryInput(const char* text, IsPrivateRelation is_private) {
  QueryInput out = {};
  const Level top = {is_private, InvalidOid, nullptr, NIL};
  List* raw = raw_parser(text, RAW_PARSE_DEFAULT);
  if (list_length(raw) != 1)
    Refuse(top, ERRCODE_SYNTAX_ERROR, "it is not exactly one statement",
           "Pass one SELECT statement.");
  RawStmt* stmt = linitial_node(RawStmt, raw);
  if (!IsA(stmt->stmt, SelectStmt))
    Refuse(top, ERRCODE_WRONG_OBJECT_TYPE, "it is not a SELECT", "Pass one SELECT statement.");
  // As the caller, with the caller's search_path: the names mean what they
  // mean to the analyst (locks each relation, AccessShareLock).
  Query* q = parse_analyze_fixedparams(stmt, text, nullptr, 0, nullptr);
  out.source = static_cast<Query*>(copyObjectImpl(q));
  out.private_index = AnalyseLevel(q, top, &out);
  out.query = q;
  return out;
}

void CheckLookups(const QueryInput& q, Oid caller, Oid reader) {
  ListCell* lc;
  foreach (lc, q.lookups) {
    Oid l = lfirst_oid(lc);
    if (pg_class_aclcheck(l, caller, ACL_SELECT) != ACLCHECK_OK ||
        pg_class_aclcheck(l, reader, ACL_SELECT) != ACLCHECK_OK)
      Refuse(ERRCODE_INSUFFICIENT_PRIVILEGE,
             psprintf("the lookup relation %s is not readable by the caller and the reader",
                      get_rel_name(l)),
             "A lookup relation is public: grant SELECT on it to the analyst and to the reader "
             "(the owner of a protected relation, else the owner of the view that reads the "
             "private relation, or the analyst).");
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
  const int p = llast_int(in.private_path);  // in the private relation's own level
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
  unit = ExprThroughViews(q, in.private_path, unit, kQueryUnitColumn);
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
  // analysed, views by name (each run inlines and validates them as they
  // are then), every name qualified unless the pinned path finds it.
  int level = PinInternalSettings();
  char* sql = pg_get_querydef(static_cast<Query*>(copyObjectImpl(in.source)), false);
  AtEOXact_GUC(true, level);
  return sql;
}

}  // namespace dperm::pg
