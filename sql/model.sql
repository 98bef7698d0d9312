-- dp_model input validation: a model is read back from its JSON text (dump
-- and restore, casts from jsonb); anything else is a clear error.
SELECT '{"format":"dperm.model/1","loss":"huber","coefficients":[1,2],"intercept":0.5,"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}'::dp_model AS m \gset
SELECT dp_predict(:'m', ARRAY[0.3, 0.4]) AS prediction;  -- 0.5 + 0.3 + 0.8
SELECT * FROM dp_coefficients(:'m');
SELECT dp_predict(:'m', ARRAY[3, 4]) AS clipped_prediction;  -- clipped to (0.6, 0.8)
SELECT dp_predict(:'m', ARRAY[0.3]);
SELECT dp_predict(:'m', ARRAY[[0.3, 0.4]]);
SELECT dp_predict(:'m', ARRAY[NULL, 0.4]::float8[]) AS null_is_zero;
-- errors
SELECT 'not json'::dp_model;
SELECT '[1]'::dp_model;
SELECT '{"loss":"softmax"}'::dp_model;
SELECT '{"loss":"huber","coefficients":[1],"intercept":0}'::dp_model;
SELECT '{"loss":"huber","coefficients":[1,"a"],"intercept":0,"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"huber","coefficients":[1],"intercept":null,"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"huber","coefficients":[1],"intercept":0,"preprocessing":{"feature_bound":-1,"fit_intercept":true,"huber_delta":1}}'::dp_model;
