-- ==== docs: the option reference, a comment on every object ====

CREATE FUNCTION dperm.option_reference()
  RETURNS TABLE(key text, sql_type text, "values" text, "default" text, meaning text)
  AS 'MODULE_PATHNAME', 'dperm_option_reference'
  LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;
COMMENT ON FUNCTION dperm.option_reference() IS 'the option table: every key dp_options and the jsonb options take, its SQL type, its values, its default and its meaning';

COMMENT ON FUNCTION dp_model_in(cstring) IS 'the text input of dp_model: a model''s JSON, checked field by field';
COMMENT ON FUNCTION dp_model_out(dp_model) IS 'the text output of dp_model: the model''s JSON';
COMMENT ON FUNCTION dp_model_recv(internal) IS 'the binary input of dp_model, checked field by field';
COMMENT ON FUNCTION dp_model_send(dp_model) IS 'the binary output of dp_model';
COMMENT ON FUNCTION dp_predict(dp_model, float8[]) IS 'the probability (logistic) or prediction (Huber) of a model for a feature vector, with training''s clipping; an error for softmax models';
COMMENT ON FUNCTION dp_explain(text, bigint, int, jsonb) IS 'the plan of a release (algorithm, iterations, noise, accounting, memory) for a loss, n, d and options, without reading any data';
COMMENT ON FUNCTION dperm.logreg_bool_transition(internal, float8[], boolean, jsonb) IS 'internal: dp_logreg''s transition (boolean labels); buffers one clipped row';
COMMENT ON FUNCTION dperm.logreg_float_transition(internal, float8[], float8, jsonb) IS 'internal: dp_logreg''s transition (float8 labels); buffers one clipped row';
COMMENT ON FUNCTION dperm.huber_transition(internal, float8[], float8, jsonb) IS 'internal: dp_huber''s transition; buffers one clipped row';
COMMENT ON FUNCTION dperm.softmax_transition(internal, float8[], int, jsonb) IS 'internal: dp_softmax''s transition; buffers one clipped row';
COMMENT ON FUNCTION dperm.final(internal) IS 'internal: the training aggregates'' final function; charges the ledger, then trains';
COMMENT ON FUNCTION dperm.pass_logreg_bool_step(float8[], float8[], boolean, float8[], float8[]) IS 'internal: a streaming pass''s transition (logistic, boolean labels); only inside dperm.train';
COMMENT ON FUNCTION dperm.pass_logreg_float_step(float8[], float8[], float8, float8[], float8[]) IS 'internal: a streaming pass''s transition (logistic, float8 labels); only inside dperm.train';
COMMENT ON FUNCTION dperm.pass_huber_step(float8[], float8[], float8, float8[], float8[]) IS 'internal: a streaming pass''s transition (Huber); only inside dperm.train';
COMMENT ON FUNCTION dperm.pass_softmax_step(float8[], float8[], int, float8[], float8[]) IS 'internal: a streaming pass''s transition (softmax); only inside dperm.train';
COMMENT ON FUNCTION dperm.pass_combine(float8[], float8[]) IS 'internal: adds two streaming pass states element by element (parallel workers, Citus shards)';
COMMENT ON FUNCTION dperm.budget_spent(regclass, text, float8, float8[], float8, float8) IS 'what a relation has spent under an accounting (what budget_status shows), optionally with one more charge; 42501 unless the caller may see the relation';
COMMENT ON FUNCTION dperm.is_ledger_curve(float8[]) IS 'whether a ledger row''s rdp is a curve on dperm.rdp_orders() that composes (else the row composes by sums)';
COMMENT ON FUNCTION dperm.curve_add(float8[], float8[]) IS 'the order-wise sum of two RDP curves (NULL is no curve)';
COMMENT ON AGGREGATE dperm.curve_sum(float8[]) IS 'the order-wise sum of RDP curves';
COMMENT ON FUNCTION dperm.ledger_totals() IS 'internal: the ledger''s trigger that keeps dperm.budget_totals, each relation''s running sums';
COMMENT ON FUNCTION dperm.runs_that_fit(regclass, text, float8, float8, float8[], float8, float8) IS 'how many more copies of a charge (RDP curve, epsilon, delta) fit in a relation''s budget, at most 10^6; 42501 unless the caller may see the relation';
COMMENT ON FUNCTION dperm.charges_fit(regclass, text, float8, float8, float8[], float8, float8, bigint) IS 'whether k more copies of a charge fit in a relation''s budget; 42501 unless the caller may see the relation';
