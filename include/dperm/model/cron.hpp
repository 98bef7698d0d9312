// Cron schedules, as pg_cron reads them, for the retraining forecast: when
// will the k-th next run of a schedule start? (docs/design.md section 7.)
//
// The five fields of Vixie cron (minute hour day-of-month month day-of-week),
// each `*`, a number, a range `a-b`, a step `*/n` or `a-b/n` (`a/n`: from a to
// the field's end), or a comma list of these; month and day names (jan, mon)
// and day 7 = Sunday; the macros @yearly, @annually, @monthly, @weekly,
// @daily, @midnight and @hourly. As in Vixie cron (and pg_cron), when both
// day fields are restricted a day matches if either does; a field starting
// with `*` counts as unrestricted. Times are UTC (pg_cron 1.4 runs jobs in
// GMT).
#pragma once
#include "dperm/util/errors.hpp"

#include <bitset>
#include <cstdint>
#include <string>

namespace dperm {

struct CronSchedule {
  std::bitset<60> minute;
  std::bitset<24> hour;
  std::bitset<32> day_of_month;  // 1 .. 31
  std::bitset<13> month;         // 1 .. 12
  std::bitset<7> day_of_week;    // 0 = Sunday
  bool dom_star = false;
  bool dow_star = false;
};

// Parses `spec`; throws kInvalidParameter (naming the field) on anything
// else, including pg_cron's "@reboot" and "N seconds" forms, which have no
// forecast.
CronSchedule ParseCron(const std::string& spec);

// Whether `spec` is a pg_cron schedule that ParseCron refuses only because
// it has no forecast: "@reboot", an interval "N seconds" (pg_cron 1.5), or a
// day of month "$" (the last day, pg_cron 1.6). Any other schedule ParseCron
// refuses is invalid.
bool CronWithoutForecast(const std::string& spec);

// Minutes since 1970-01-01 00:00 UTC of the first run strictly after
// `after_minute`, or -1 if there is none before the year 10000.
int64_t NextCronMinute(const CronSchedule& schedule, int64_t after_minute);

// The most runs ahead a forecast counts (k of NthCronMinute): the cap of
// dperm.runs_that_fit, so that dperm.retraining_forecast can always ask.
// With the year-10000 horizon it bounds the work of one call: at most k
// runs plus one step per skipped month, day or hour (a few times 10^7
// steps), each step counted for interrupts (interrupt.hpp).
constexpr int64_t kMaxCronRuns = 1000000;

// The k-th run (1 <= k <= kMaxCronRuns) strictly after `after_minute`, or -1.
int64_t NthCronMinute(const CronSchedule& schedule, int64_t after_minute, int64_t k);

}  // namespace dperm
