// A minimal JSON writer and reader for models and plans (the core has no
// JSON library).
#pragma once
#include "dperm/util/errors.hpp"

#include <string>
#include <utility>
#include <vector>

namespace dperm {

class JsonWriter {
 public:
  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(const char* key);
  JsonWriter& Number(double value);  // shortest round-trip form; NaN/inf -> null
  JsonWriter& Integer(long long value);
  JsonWriter& String(const char* value);
  JsonWriter& Bool(bool value);
  JsonWriter& Null();
  JsonWriter& Raw(const char* json);  // an already serialised JSON value
  const std::string& str() const { return out_; }

 private:
  void Separate();
  std::string out_;
  bool need_comma_ = false;
};

// A parsed JSON value. An array whose elements are all numbers keeps them in
// `numbers` (a model's millions of coefficients stay compact); any other
// array keeps `elements`.
struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;  // strtod of the text: 1e400 is inf, 1e-400 is 0
  std::string string;
  std::vector<double> numbers;
  std::vector<JsonValue> elements;
  std::vector<std::pair<std::string, JsonValue>> members;  // in text order

  // The member `key` of an object, the last one when repeated (as jsonb
  // keeps it), or nullptr.
  const JsonValue* Find(const char* key) const;
  size_t size() const { return numbers.size() + elements.size(); }
  // Element i (< size()) of an array: a number, or a value.
  bool IsNumberAt(size_t i) const;
  double NumberAt(size_t i) const;      // IsNumberAt(i) only
  const JsonValue& At(size_t i) const;  // !IsNumberAt(i) only
};

// Parses RFC 8259 JSON text (one value, whitespace around it); throws
// Error(kInvalidText) naming the offset on malformed text. Checks for a
// pending cancel every few thousand values.
JsonValue ParseJson(const std::string& text);

// Writes a parsed value back (members in their order; numbers in shortest
// round-trip form).
void WriteJson(JsonWriter& j, const JsonValue& v);

}  // namespace dperm
