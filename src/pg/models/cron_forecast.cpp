// dperm.cron_next_run: the forecast of a pg_cron schedule's runs (the core's
// cron.cpp), and the check of its schedule (docs/user-guide.md, "Named models
// and retraining"): an invalid schedule is an error (22023, naming it), never
// a NULL that reads like "no run"; a valid pg_cron schedule that has no
// forecast (@reboot, "N seconds", a "$" day of month) stays NULL.
#include "dperm/model/cron.hpp"

#include "base/boundary.hpp"

extern "C" {
#include "utils/builtins.h"
#include "utils/timestamp.h"
}

using namespace dperm::pg;

// dperm.cron_next_run(cron_schedule, after, k DEFAULT 1) -> timestamptz:
// the k-th run of a pg_cron schedule after `after` (UTC, as pg_cron 1.4
// runs jobs); NULL when the schedule has no forecast (cron.hpp: @reboot,
// "N seconds", an impossible date) or the run falls after the year 9999.
DPERM_FUNCTION(dperm_cron_next_run) {
  char* spec = text_to_cstring(PG_GETARG_TEXT_PP(0));
  TimestampTz after = PG_GETARG_TIMESTAMPTZ(1);
  int64 k = PG_GETARG_INT64(2);
  if (k < 1 || k > dperm::kMaxCronRuns)
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("k must be between 1 and %lld", static_cast<long long>(dperm::kMaxCronRuns)),
             errhint("dperm forecasts at most %lld runs ahead (the cap of dperm.runs_that_fit).",
                     static_cast<long long>(dperm::kMaxCronRuns))));
  if (TIMESTAMP_NOT_FINITE(after)) PG_RETURN_NULL();
  // PostgreSQL counts microseconds from 2000-01-01, 10957 days after 1970-01-01.
  const int64 epoch_minutes = int64(10957) * 1440;
  int64 after_minute =
      after / USECS_PER_MINUTE - (after % USECS_PER_MINUTE < 0 ? 1 : 0) + epoch_minutes;
  int64 run = -1;
  dperm::pg::CoreError failure;
  bool ok = CaptureCore(
      [&] {
        dperm::CronSchedule schedule = dperm::ParseCron(spec);
        run = dperm::NthCronMinute(schedule, after_minute, k);
      },
      &failure);
  // A cancel or timeout is raised; a schedule it cannot forecast is NULL.
  if (!ok && failure.sqlstate == ERRCODE_QUERY_CANCELED) ReportCoreError(failure);
  if (!ok || run < 0) PG_RETURN_NULL();
  PG_RETURN_TIMESTAMPTZ((run - epoch_minutes) * USECS_PER_MINUTE);
}

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
      ereport(ERROR,
              (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
               errmsg("invalid cron schedule \"%s\"", spec), errdetail("%s", failure.message),
               errhint("A schedule has five fields (minute hour day-of-month month "
                       "day-of-week), each *, a number, a range a-b, a step */n or a-b/n, "
                       "or a comma list; or one of @yearly, @monthly, @weekly, @daily, "
                       "@hourly (@reboot and \"N seconds\" are valid but have no forecast: "
                       "NULL).")));
  }
  return dperm_cron_next_run(fcinfo);
}
