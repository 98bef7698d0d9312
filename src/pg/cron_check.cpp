// dperm.cron_next_run's check of its schedule (docs/user-guide.md, "Named
// models and retraining"): an invalid schedule is an error (22023, naming
// it), never a NULL that reads like "no run"; a valid pg_cron schedule that
// has no forecast (@reboot, "N seconds", a "$" day of month) stays NULL. The
// forecast itself is dperm_cron_next_run (model_cron.cpp).
#include "dperm/model/cron.hpp"

#include "boundary.hpp"

extern "C" {
#include "utils/builtins.h"

Datum dperm_cron_next_run(PG_FUNCTION_ARGS);
}

using namespace dperm::pg;

// dperm.cron_next_run(cron_schedule, after, k DEFAULT 1): refuses a schedule
// that is not a pg_cron schedule, then forecasts (dperm_cron_next_run).
DPERM_FUNCTION(dperm_cron_next_run_checked) {
  char* spec = text_to_cstring(PG_GETARG_TEXT_PP(0));
  CoreError failure;
  bool parsed = CaptureCore([&] { (void)dperm::ParseCron(spec); }, &failure);
  if (!parsed) {
    if (failure.sqlstate == ERRCODE_QUERY_CANCELED) ReportCoreError(failure);
    bool without_forecast = false;
    RunCore([&] { without_forecast = dperm::CronWithoutForecast(spec); });
    if (!without_forecast)
      ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                      errmsg("invalid cron schedule \"%s\"", spec), errdetail("%s", failure.message),
                      errhint("A schedule has five fields (minute hour day-of-month month "
                              "day-of-week), each *, a number, a range a-b, a step */n or a-b/n, "
                              "or a comma list; or one of @yearly, @monthly, @weekly, @daily, "
                              "@hourly (@reboot and \"N seconds\" are valid but have no forecast: "
                              "NULL).")));
  }
  return dperm_cron_next_run(fcinfo);
}
