// What the option table (option_table.cpp) generates: the options table of
// docs/sql-reference.md (OptionsMarkdown) and the SQL of dp_options
// (DpOptionsSql, sql/gen_sql).
#include "dperm/options/options.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>

namespace dperm {
namespace {

using Type = OptionSpec::Type;

// The reference's "values" of an entry without its own: the range, as an interval.
std::string RangeText(const OptionSpec& s) {
  if (s.values != nullptr) return s.values;
  const std::string lo = ShortestNumber(s.lo);
  if (s.type == Type::kBoolean) return "`true`, `false`";
  if (s.type == Type::kInteger)
    return "integer in [" + std::to_string(static_cast<int64_t>(s.lo)) + ", " +
           std::to_string(static_cast<int64_t>(s.hi)) + "]";
  if (!std::isfinite(s.hi)) return std::string(s.lo_open ? "> " : "≥ ") + lo;
  return std::string(s.lo_open ? "(" : "[") + lo + ", " + ShortestNumber(s.hi) +
         (s.hi_open ? ")" : "]");
}

// `text` as an SQL string literal.
std::string SqlLiteral(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// The items joined by ", ", a new line (starting with `indent`) before an item
// that would pass column 90.
std::string Wrapped(const std::vector<std::string>& items, const std::string& indent) {
  std::string out = indent;
  size_t column = indent.size();
  for (size_t i = 0; i < items.size(); i++) {
    if (i > 0 && column + 2 + items[i].size() > 90) {
      out += ",\n" + indent;
      column = indent.size();
    } else if (i > 0) {
      out += ", ";
      column += 2;
    }
    out += items[i];
    column += items[i].size();
  }
  return out;
}

// A table's entries in dp_options' order (sql_position), checked: the
// positions are 1 .. n, no required parameter follows one with a default
// (PostgreSQL refuses that), every key is a plain SQL identifier.
std::vector<const OptionSpec*> DpOptionsParameters(const std::vector<OptionSpec>& table) {
  std::vector<const OptionSpec*> params;
  for (const OptionSpec& s : table) params.push_back(&s);
  std::sort(params.begin(), params.end(), [](const OptionSpec* a, const OptionSpec* b) {
    return a->sql_position < b->sql_position;
  });
  const auto broken = [](const OptionSpec* s, const std::string& why) {
    throw Error(ErrorKind::kInternal,
                std::string("option table: dp_options' parameter \"") + s->key + "\" " + why);
  };
  for (size_t i = 0; i < params.size(); i++) {
    const OptionSpec* s = params[i];
    if (s->sql_position != static_cast<int>(i) + 1)
      broken(s, "has position " + std::to_string(s->sql_position) + ", not " +
                    std::to_string(i + 1) + " (positions are 1 .. " +
                    std::to_string(params.size()) + ", each once)");
    if (s->sql_default == nullptr && i > 0 && params[i - 1]->sql_default != nullptr)
      broken(s, "is required but follows one with a default");
    if (std::strspn(s->key, "abcdefghijklmnopqrstuvwxyz_0123456789") != std::strlen(s->key) ||
        std::isdigit(static_cast<unsigned char>(s->key[0])))
      broken(s, "is not a plain SQL identifier");
  }
  return params;
}

}  // namespace

std::string OptionsMarkdown() {
  std::string md = "| key | type | values | default | meaning |\n|---|---|---|---|---|\n";
  for (const OptionSpec& s : OptionTable()) {
    md += std::string("| `") + s.key + "` | " + s.sql_type + " | " + RangeText(s) + " | " +
          s.fallback + " | " + s.doc;
    if (s.given != nullptr) md += "; algorithms that do not take it refuse it, naming themselves";
    md += " |\n";
  }
  return md;
}

// The options of a release by name; NULL means default. The overload for an
// option that also takes text (l2 => 'auto', l2 picked privately from a
// public grid) has that option first, as text and without a default, so that
// dp_options(epsilon => 1, l2 => 'auto') resolves to it (PostgreSQL prefers
// the string category for an unknown literal) while l2 => 0.01 and calls
// without l2 resolve to the first; dperm.check_options accepts only the one
// text (22023 otherwise).
std::string DpOptionsSql(const std::vector<OptionSpec>& table) {
  const std::vector<const OptionSpec*> params = DpOptionsParameters(table);
  std::vector<std::string> pairs, required;  // 'key', key; the required keys
  for (const OptionSpec* s : params) {
    pairs.push_back(std::string("'") + s->key + "', " + s->key);
    if (s->sql_default == nullptr) required.push_back(s->key);
  }
  const std::string body =
      "RETURNS jsonb\nLANGUAGE sql IMMUTABLE PARALLEL SAFE\n"
      "RETURN dperm.check_options(jsonb_strip_nulls(jsonb_build_object(\n" +
      Wrapped(pairs, "    ") + ")));\n";
  // One function: `text_first` (nullptr: none) first, as text.
  const auto function = [&](const OptionSpec* text_first, const std::string& comment) {
    std::vector<std::string> declared, types;
    if (text_first != nullptr) {
      declared.push_back(std::string("    ") + text_first->key + " text");
      types.push_back("text");
    }
    for (const OptionSpec* s : params) {
      if (s == text_first) continue;
      declared.push_back(
          std::string("    ") + s->key + " " + s->sql_type +
          (s->sql_default != nullptr ? std::string(" DEFAULT ") + s->sql_default : std::string()));
      types.push_back(s->sql_type);
    }
    std::string sql = "CREATE FUNCTION dp_options(\n";
    for (size_t i = 0; i < declared.size(); i++)
      sql += declared[i] + (i + 1 < declared.size() ? ",\n" : ")\n");
    return sql + body + "COMMENT ON FUNCTION dp_options(\n" + Wrapped(types, "    ") + ")\n  IS " +
           SqlLiteral(comment) + ";\n";
  };
  std::string comment = "options of a private release";
  if (!required.empty())
    comment +=
        " (" + JoinNames(required, " and ") + (required.size() > 1 ? " are" : " is") + " required)";
  std::string sql =
      "-- Generated from the option table (src/core/options/option_table.cpp,\n"
      "-- DpOptionsSql) by sql/gen_sql: edit the table, not this.\n" +
      function(nullptr, comment);
  for (const OptionSpec* s : params)
    if (s->also_text != nullptr)
      sql += "\n" + function(s, std::string("options of a private release with ") + s->key +
                                    " => '" + s->also_text + "' (" + s->key + " chosen privately)");
  return sql;
}

}  // namespace dperm
