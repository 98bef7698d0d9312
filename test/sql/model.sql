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
-- every field is checked for its kind before it is read (an
-- array read as an object crashed the server; the second literal is built
-- so that the misread finds "feature_bound" and dereferences garbage)
SELECT '{"loss":"logistic","preprocessing":["a","b","c"],"coefficients":[1],"intercept":0}'::dp_model;
SELECT '{"loss":"logistic","preprocessing":["zzz\u000faaa\u0010","XXXXXXXXXXXXf","eature_bound"],"coefficients":[1],"intercept":0}'::dp_model;
SELECT '{"loss":"logistic","preprocessing":["zzz\u000faaa\u0010","XXXXXXXXXXXXf","eature_bound"],"coefficients":[1],"intercept":0}'::jsonb::dp_model;
SELECT '{"loss":"huber","coefficients":{"a":1},"intercept":0,"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"huber","coefficients":[1,2],"intercept":0,"feature_names":{"a":"x"},"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"huber","coefficients":[1,2],"intercept":0,"feature_names":"ab","preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"huber","coefficients":[1,2],"intercept":0,"feature_names":["a"],"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"huber","coefficients":[1,2],"intercept":0,"feature_names":["a",2],"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}'::dp_model;
SELECT * FROM dp_coefficients('{"loss":"huber","coefficients":[1,2],"intercept":0,"feature_names":["a","b"],"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}');
SELECT '{"loss":"logistic","coefficients":[1],"intercept":0,"preprocessing":{"feature_bound":1e400,"fit_intercept":true,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"poisson","coefficients":[1],"intercept":0,"preprocessing":{"feature_bound":1,"fit_intercept":true,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"softmax","classes":-3,"coefficients":[[1],[2]],"intercept":null,"preprocessing":{"feature_bound":1,"fit_intercept":false,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"softmax","classes":1e400,"coefficients":[[1],[2]],"intercept":null,"preprocessing":{"feature_bound":1,"fit_intercept":false,"huber_delta":1}}'::dp_model;
SELECT '{"loss":"softmax","classes":2,"coefficients":[{"a":1},[2]],"intercept":null,"preprocessing":{"feature_bound":1,"fit_intercept":false,"huber_delta":1}}'::dp_model;
-- rows are checked before the coefficients are allocated (2 x 100000 here)
SELECT ('{"loss":"softmax","classes":2,"coefficients":[[' || repeat('0,', 99999) || '0],[]],"intercept":null,"preprocessing":{"feature_bound":1,"fit_intercept":false,"huber_delta":1}}')::dp_model;
