// Cron schedules (cron.hpp): parsing and the k-th next run, checked against
// dates worked out by hand.
#include "dperm/model/cron.hpp"

#include <gtest/gtest.h>

namespace dperm {
namespace {

// Minutes since the epoch of a UTC date and time (days from the civil
// calendar by counting: 2026-01-01 is day 20454).
int64_t At(int64_t day, int h, int mi) { return day * 1440 + h * 60 + mi; }
const int64_t k2026 = 20454;  // 2026-01-01, a Thursday

TEST(Cron, EveryMinute) {
  CronSchedule s = ParseCron("* * * * *");
  EXPECT_EQ(NextCronMinute(s, At(k2026, 10, 5)), At(k2026, 10, 6));
  EXPECT_EQ(NthCronMinute(s, At(k2026, 10, 5), 70), At(k2026, 11, 15));
}

TEST(Cron, NightlyAndMacros) {
  CronSchedule s = ParseCron("30 2 * * *");
  EXPECT_EQ(NextCronMinute(s, At(k2026, 2, 30)), At(k2026 + 1, 2, 30));
  EXPECT_EQ(NthCronMinute(s, At(k2026, 0, 0), 3), At(k2026 + 2, 2, 30));
  CronSchedule daily = ParseCron("@daily");
  EXPECT_EQ(NextCronMinute(daily, At(k2026, 0, 0)), At(k2026 + 1, 0, 0));
  CronSchedule hourly = ParseCron(" @hourly ");
  EXPECT_EQ(NthCronMinute(hourly, At(k2026, 0, 0), 5), At(k2026, 5, 0));
  // @monthly from 2026-01-15: Feb 1 (day 31) then Mar 1 (31 + 28).
  CronSchedule monthly = ParseCron("@monthly");
  EXPECT_EQ(NthCronMinute(monthly, At(k2026 + 14, 0, 0), 2), At(k2026 + 31 + 28, 0, 0));
}

TEST(Cron, StepsRangesListsNames) {
  CronSchedule s = ParseCron("*/15 9-17/4 * * *");
  EXPECT_EQ(NextCronMinute(s, At(k2026, 9, 50)), At(k2026, 13, 0));
  EXPECT_EQ(NextCronMinute(s, At(k2026, 13, 0)), At(k2026, 13, 15));
  CronSchedule names = ParseCron("0 12 * jan,MAR mon");
  // Thursday Jan 1 2026 -> Monday Jan 5.
  EXPECT_EQ(NextCronMinute(names, At(k2026, 0, 0)), At(k2026 + 4, 12, 0));
  // Sunday as 0 and as 7.
  EXPECT_EQ(NextCronMinute(ParseCron("0 0 * * 7"), At(k2026, 0, 0)), At(k2026 + 3, 0, 0));
  EXPECT_EQ(NextCronMinute(ParseCron("0 0 * * sun"), At(k2026, 0, 0)), At(k2026 + 3, 0, 0));
}

TEST(Cron, BothDayFieldsRestrictedMeansEither) {
  // The 10th or any Monday: Monday the 5th comes first.
  CronSchedule s = ParseCron("0 0 10 * 1");
  EXPECT_EQ(NextCronMinute(s, At(k2026, 0, 0)), At(k2026 + 4, 0, 0));
  EXPECT_EQ(NextCronMinute(s, At(k2026 + 4, 0, 0)), At(k2026 + 9, 0, 0));
  // A star day-of-week keeps the day of month alone.
  EXPECT_EQ(NextCronMinute(ParseCron("0 0 10 * *"), At(k2026, 0, 0)), At(k2026 + 9, 0, 0));
}

TEST(Cron, ImpossibleDateHasNoRun) {
  EXPECT_EQ(NextCronMinute(ParseCron("0 0 31 2 *"), At(k2026, 0, 0)), -1);
  // Feb 29 exists in 2028: day 20454 + 365 + 365 + 31 + 28.
  EXPECT_EQ(NextCronMinute(ParseCron("0 0 29 2 *"), At(k2026, 0, 0)),
            At(k2026 + 365 + 365 + 31 + 28, 0, 0));
}

TEST(Cron, RejectsWhatItCannotForecast) {
  for (const char* bad : {"", "* * * *", "* * * * * *", "60 * * * *", "* 24 * * *", "* * 0 * *",
                          "* * * 13 *", "* * * * 8", "*/0 * * * *", "5-1 * * * *", "1,,2 * * * *",
                          "1, * * * *", "@reboot", "30 seconds", "x * * * *"})
    EXPECT_THROW(ParseCron(bad), Error) << bad;
}

// Of what ParseCron refuses, only pg_cron's own forms without a forecast
// are valid schedules (dperm.cron_next_run: NULL); the rest are errors.
TEST(Cron, TellsValidSchedulesWithoutForecastFromInvalidOnes) {
  for (const char* valid : {"@reboot", " @reboot ", "30 seconds", "1 second", "0 0 $ * *"}) {
    EXPECT_THROW(ParseCron(valid), Error) << valid;
    EXPECT_TRUE(CronWithoutForecast(valid)) << valid;
  }
  for (const char* bad : {"", "* * * *", "60 * * * *", "x * * * *", "@rebot", "seconds",
                          "-1 seconds", "100 seconds", "30 minutes", "$ * * * *"})
    EXPECT_FALSE(CronWithoutForecast(bad)) << bad;
}

}  // namespace
}  // namespace dperm
