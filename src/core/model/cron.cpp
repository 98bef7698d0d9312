// Cron schedules for the retraining forecast (cron.hpp).
#include "dperm/model/cron.hpp"

#include "dperm/util/interrupt.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

namespace dperm {
namespace {

struct Field {
  const char* name;
  int lo, hi;
  const char* const* names;  // names[i] is value lo + i (nullptr: none)
};

const char* const kMonths[] = {"jan", "feb", "mar", "apr", "may", "jun",
                               "jul", "aug", "sep", "oct", "nov", "dec"};
const char* const kDays[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun"};

const Field kFields[5] = {{"minute", 0, 59, nullptr},
                          {"hour", 0, 23, nullptr},
                          {"day of month", 1, 31, nullptr},
                          {"month", 1, 12, kMonths},
                          {"day of week", 0, 7, kDays}};

[[noreturn]] void Bad(const Field& f, const std::string& text) {
  ThrowInvalid("invalid " + std::string(f.name) + " field \"" + text + "\" in cron schedule",
               "A schedule has five fields (minute hour day-of-month month day-of-week), each *, "
               "a number, a range a-b, a step */n or a-b/n, or a comma list; or one of @yearly, "
               "@monthly, @weekly, @daily, @hourly.");
}

int Value(const Field& f, const std::string& token, const std::string& field_text) {
  if (token.empty()) Bad(f, field_text);
  if (std::isdigit(static_cast<unsigned char>(token[0]))) {
    if (token.size() > 4) Bad(f, field_text);
    for (char c : token)
      if (!std::isdigit(static_cast<unsigned char>(c))) Bad(f, field_text);
    int v = std::stoi(token);
    if (v < f.lo || v > f.hi) Bad(f, field_text);
    return v;
  }
  if (f.names != nullptr && token.size() == 3) {
    std::string lower;
    for (char c : token) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (int i = 0; i <= f.hi - f.lo; i++)
      if (lower == f.names[i]) return f.lo + i;
  }
  Bad(f, field_text);
}

// The values of one field; `star` says whether it starts with '*'.
std::vector<bool> ParseField(const Field& f, const std::string& text, bool* star) {
  std::vector<bool> set(f.hi + 1, false);
  *star = !text.empty() && text[0] == '*';
  std::stringstream items(text);
  std::string item;
  int count = 0;
  while (std::getline(items, item, ',')) {
    count++;
    std::string range = item;
    int step = 1;
    size_t slash = item.find('/');
    if (slash != std::string::npos) {
      range = item.substr(0, slash);
      std::string s = item.substr(slash + 1);
      if (s.empty() || s.size() > 4) Bad(f, text);
      for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) Bad(f, text);
      step = std::stoi(s);
      if (step < 1) Bad(f, text);
    }
    int lo, hi;
    if (range == "*") {
      lo = f.lo;
      hi = f.hi;
    } else {
      size_t dash = range.find('-');
      lo = Value(f, range.substr(0, dash), text);
      hi = dash == std::string::npos ? (slash != std::string::npos ? f.hi : lo)
                                     : Value(f, range.substr(dash + 1), text);
      if (hi < lo) Bad(f, text);
    }
    for (int v = lo; v <= hi; v += step) set[v] = true;
  }
  if (count == 0 || text.back() == ',') Bad(f, text);
  return set;
}

// Days since 1970-01-01 of a civil date, and back (Hinnant's algorithms).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t* y, unsigned* m, unsigned* d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = static_cast<int64_t>(yoe) + era * 400 + (*m <= 2);
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace

CronSchedule ParseCron(const std::string& raw) {
  std::string spec;
  {
    size_t a = raw.find_first_not_of(" \t\n");
    size_t b = raw.find_last_not_of(" \t\n");
    spec = a == std::string::npos ? "" : raw.substr(a, b - a + 1);
  }
  if (spec == "@yearly" || spec == "@annually") spec = "0 0 1 1 *";
  else if (spec == "@monthly") spec = "0 0 1 * *";
  else if (spec == "@weekly") spec = "0 0 * * 0";
  else if (spec == "@daily" || spec == "@midnight") spec = "0 0 * * *";
  else if (spec == "@hourly") spec = "0 * * * *";
  std::stringstream words(spec);
  std::vector<std::string> fields;
  std::string w;
  while (words >> w) fields.push_back(w);
  if (fields.size() != 5)
    ThrowInvalid("cron schedule \"" + raw + "\" does not have five fields",
                 "dperm forecasts schedules of five fields (minute hour day-of-month month "
                 "day-of-week) or @yearly, @monthly, @weekly, @daily, @hourly.");
  CronSchedule s;
  bool star;
  std::vector<bool> v = ParseField(kFields[0], fields[0], &star);
  for (int i = 0; i < 60; i++) s.minute[i] = v[i];
  v = ParseField(kFields[1], fields[1], &star);
  for (int i = 0; i < 24; i++) s.hour[i] = v[i];
  v = ParseField(kFields[2], fields[2], &s.dom_star);
  for (int i = 1; i <= 31; i++) s.day_of_month[i] = v[i];
  v = ParseField(kFields[3], fields[3], &star);
  for (int i = 1; i <= 12; i++) s.month[i] = v[i];
  v = ParseField(kFields[4], fields[4], &s.dow_star);
  for (int i = 0; i <= 7; i++)
    if (v[i]) s.day_of_week[i % 7] = true;
  return s;
}

int64_t NextCronMinute(const CronSchedule& s, int64_t after) {
  int64_t t = after + 1;
  for (;;) {
    CountWork(64);  // a step: a date conversion and at most 60 minutes
    int64_t days = FloorDiv(t, 1440);
    int64_t minute_of_day = t - days * 1440;
    int64_t y;
    unsigned m, d;
    CivilFromDays(days, &y, &m, &d);
    if (y >= 10000) return -1;
    if (!s.month[m]) {  // the first day of the next month
      t = (m == 12 ? DaysFromCivil(y + 1, 1, 1) : DaysFromCivil(y, m + 1, 1)) * 1440;
      continue;
    }
    int dow = static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday (4)
    bool dom = s.day_of_month[d], wd = s.day_of_week[dow];
    bool day = (s.dom_star || s.dow_star) ? (dom && wd) : (dom || wd);
    if (!day) {
      t = (days + 1) * 1440;
      continue;
    }
    int h = static_cast<int>(minute_of_day / 60);
    if (!s.hour[h]) {
      t = days * 1440 + (h + 1) * 60;
      continue;
    }
    for (int mi = static_cast<int>(minute_of_day % 60); mi < 60; mi++)
      if (s.minute[mi]) return days * 1440 + h * 60 + mi;
    t = days * 1440 + (h + 1) * 60;
  }
}

bool CronWithoutForecast(const std::string& raw) {
  std::stringstream words(raw);
  std::vector<std::string> fields;
  std::string w;
  while (words >> w) fields.push_back(w);
  if (fields.size() == 1) return fields[0] == "@reboot";
  if (fields.size() == 2) {
    const std::string& n = fields[0];
    bool digits = !n.empty() && n.size() <= 2 &&
                  std::all_of(n.begin(), n.end(), [](char c) { return c >= '0' && c <= '9'; });
    return digits && (fields[1] == "seconds" || fields[1] == "second");
  }
  return fields.size() == 5 && fields[2] == "$";
}

int64_t NthCronMinute(const CronSchedule& s, int64_t after, int64_t k) {
  if (k < 1 || k > kMaxCronRuns)
    ThrowInvalid("the run number k must be between 1 and " + std::to_string(kMaxCronRuns));
  int64_t t = after;
  for (int64_t i = 0; i < k; i++) {
    t = NextCronMinute(s, t);
    if (t < 0) return -1;
  }
  return t;
}

}  // namespace dperm
