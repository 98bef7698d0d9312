-- dperm, complete: what CREATE EXTENSION dperm installs (the build writes
-- this file to sql/dperm--<default_version>.sql through sql/gen_sql, which
-- puts what the core's tables generate in place of its markers). Older
-- databases reach the same catalog through sql/dperm--0.1.0.sql and the
-- upgrade scripts; test/upgrade.sh checks that both give the same objects (a
-- change to the current version goes into its part here AND into the latest
-- upgrade script, sql/upgrade/dperm--<previous>--<default_version>.sql.in,
-- or into one part both include). The parts, by topic, are sql/install/*.sql
-- (@INCLUDE lines, which sql/gen_sql reads in their place); what the upgrade
-- declares exactly as this script does is in sql/install/common/, included
-- by both.
\echo Use "CREATE EXTENSION dperm" to load this file. \quit

CREATE SCHEMA dperm;
COMMENT ON SCHEMA dperm IS 'dperm catalog: privacy budgets and the ledger of releases';

@INCLUDE install/01_options.sql@
@INCLUDE install/02_dp_model.sql@
@INCLUDE install/03_aggregates.sql@
@INCLUDE install/04_accountant.sql@
@INCLUDE install/05_catalog.sql@
@INCLUDE install/06_running_budget_totals.sql@
@INCLUDE install/07_protected_relations.sql@
@INCLUDE install/08_budgets_follow_the_data.sql@
@INCLUDE install/09_training_on_a_query.sql@
@INCLUDE install/10_feature_specs.sql@
@INCLUDE install/11_progress.sql@
@INCLUDE install/12_named_models_and_scheduled.sql@
@INCLUDE install/13_feature_specs_named_models.sql@
@INCLUDE install/14_explain.sql@
