// A minimal JSON writer for models and plans (the core has no JSON library).
#pragma once
#include "dperm/core.hpp"

#include <string>

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

}  // namespace dperm
