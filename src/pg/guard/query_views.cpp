// Views in a query's input (query_views.hpp). A view whose body is a
// per-row map of one private relation is such a map itself, and a map of a
// map is one ([McS09], PINQ: stable transformations compose, stability 1
// times 1), so the input of a query on it is 1-stable as the inline query
// is. The rights are PostgreSQL's: the body's relations are checked as the
// stored rule says (the view's owner, or the caller for security_invoker),
// the view itself as its reader; train_query.cpp decides who reads.
#include "guard/query_views.hpp"

extern "C" {
#include "access/relation.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteHandler.h"
#include "utils/rel.h"
}

namespace dperm::pg {

Query* InlineView(RangeTblEntry* rte, List** checks) {
  // The view is locked (AccessShareLock) by the parser or, inside another
  // view, by AcquireRewriteLocks: its rule cannot change until the end of
  // the transaction, so the body checked is the body read.
  Relation view = relation_open(rte->relid, NoLock);
  Query* body = static_cast<Query*>(copyObjectImpl(get_view_query(view)));
  // The view's columns by their names now (ALTER VIEW ... RENAME COLUMN
  // does not rename the stored target list): the names the query used.
  TupleDesc desc = RelationGetDescr(view);
  ListCell* lc;
  foreach (lc, body->targetList) {
    TargetEntry* t = static_cast<TargetEntry*>(lfirst(lc));
    if (!t->resjunk && t->resno <= desc->natts)
      t->resname = pstrdup(NameStr(TupleDescAttr(desc, t->resno - 1)->attname));
  }
  const bool barrier = RelationIsSecurityView(view);
  relation_close(view, NoLock);
  AcquireRewriteLocks(body, true, false);
  *checks = lappend(*checks, copyObjectImpl(rte));
  // As ApplyRetrieveRule (PostgreSQL 15, rewriteHandler.c) turns a view's
  // entry into its sub-query: no relation fields, no permission check of
  // its own (the copy above keeps it). An alias, so that the sub-query is
  // deparsed with one (PostgreSQL 15 requires it in FROM).
  rte->rtekind = RTE_SUBQUERY;
  rte->subquery = body;
  rte->security_barrier = barrier;
  rte->relid = InvalidOid;
  rte->relkind = 0;
  rte->rellockmode = 0;
  rte->tablesample = nullptr;
  rte->inh = false;
  rte->requiredPerms = 0;
  rte->checkAsUser = InvalidOid;
  rte->selectedCols = nullptr;
  rte->insertedCols = nullptr;
  rte->updatedCols = nullptr;
  rte->extraUpdatedCols = nullptr;
  if (rte->alias == nullptr) rte->alias = makeAlias(rte->eref->aliasname, NIL);
  return body;
}

Expr* ExprThroughViews(Query* q, List* path, Expr* expr, const char* column) {
  if (list_length(path) <= 1) return expr;
  const int index = linitial_int(path);
  RangeTblEntry* rte = rt_fetch(index, q->rtable);
  Query* body = rte->subquery;
  Expr* inner = ExprThroughViews(body, list_delete_first(list_copy(path)), expr, column);
  // The body's target list has no junk entries (no ORDER BY, no GROUP BY:
  // query_input.cpp refuses them), so the new column is the last one.
  const AttrNumber resno = static_cast<AttrNumber>(list_length(body->targetList) + 1);
  body->targetList =
      lappend(body->targetList, makeTargetEntry(inner, resno, pstrdup(column), false));
  rte->eref->colnames = lappend(rte->eref->colnames, makeString(pstrdup(column)));
  Node* n = reinterpret_cast<Node*>(inner);
  return reinterpret_cast<Expr*>(
      makeVar(index, resno, exprType(n), exprTypmod(n), exprCollation(n), 0));
}

}  // namespace dperm::pg
