// Minimal JSON writer and reader.
#include "dperm/util/json.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "dperm/util/interrupt.hpp"

namespace dperm {

void JsonWriter::Separate() {
  if (need_comma_) out_ += ',';
  need_comma_ = true;
}

JsonWriter& JsonWriter::BeginObject() {
  Separate();
  out_ += '{';
  need_comma_ = false;
  return *this;
}
JsonWriter& JsonWriter::EndObject() {
  out_ += '}';
  need_comma_ = true;
  return *this;
}
JsonWriter& JsonWriter::BeginArray() {
  Separate();
  out_ += '[';
  need_comma_ = false;
  return *this;
}
JsonWriter& JsonWriter::EndArray() {
  out_ += ']';
  need_comma_ = true;
  return *this;
}
JsonWriter& JsonWriter::Key(const char* key) {
  String(key);
  out_ += ':';
  need_comma_ = false;
  return *this;
}

JsonWriter& JsonWriter::Number(double value) {
  if (!std::isfinite(value)) return Null();
  Separate();
  char buf[32];
  // The shortest of %.15g..%.17g that reads back as the same double.
  for (int precision = 15; precision <= 17; precision++) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value) break;
  }
  out_ += buf;
  return *this;
}

JsonWriter& JsonWriter::Integer(long long value) {
  Separate();
  out_ += std::to_string(value);
  return *this;
}

JsonWriter& JsonWriter::String(const char* value) {
  Separate();
  out_ += '"';
  for (const char* p = value; *p; p++) {
    unsigned char c = static_cast<unsigned char>(*p);
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\r': out_ += "\\r"; break;
      case '\t': out_ += "\\t"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out_ += buf;
        } else {
          out_ += static_cast<char>(c);
        }
    }
  }
  out_ += '"';
  return *this;
}

JsonWriter& JsonWriter::Bool(bool value) {
  Separate();
  out_ += value ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::Null() {
  Separate();
  out_ += "null";
  return *this;
}
JsonWriter& JsonWriter::Raw(const char* json) {
  Separate();
  out_ += json;
  return *this;
}

const JsonValue* JsonValue::Find(const char* key) const {
  const JsonValue* found = nullptr;
  for (const auto& m : members)
    if (m.first == key) found = &m.second;
  return found;
}

bool JsonValue::IsNumberAt(size_t i) const { return i < numbers.size(); }
double JsonValue::NumberAt(size_t i) const { return numbers[i]; }
const JsonValue& JsonValue::At(size_t i) const { return elements[i]; }

namespace {

class JsonReader {
 public:
  explicit JsonReader(const std::string& text) : s_(text) {}

  JsonValue Document() {
    JsonValue v = Value(0);
    Space();
    if (pos_ != s_.size()) Fail("text after the JSON value");
    return v;
  }

 private:
  static const int kMaxDepth = 1000;

  [[noreturn]] void Fail(const char* what) const {
    throw Error(ErrorKind::kInvalidText,
                std::string("invalid JSON: ") + what + " at offset " + std::to_string(pos_));
  }
  void Space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      pos_++;
  }
  bool Eat(char c) {
    Space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      pos_++;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail((std::string("expected '") + c + "'").c_str());
  }
  void Word(const char* w) {
    for (const char* p = w; *p; p++, pos_++)
      if (pos_ >= s_.size() || s_[pos_] != *p) Fail("unknown literal");
  }

  JsonValue Value(int depth) {
    if (depth > kMaxDepth) Fail("nesting too deep");
    if ((++values_ & 4095) == 0) CheckInterrupt();
    Space();
    if (pos_ >= s_.size()) Fail("unexpected end");
    JsonValue v;
    char c = s_[pos_];
    if (c == '{') {
      pos_++;
      v.kind = JsonValue::Kind::kObject;
      if (Eat('}')) return v;
      do {
        Space();
        if (pos_ >= s_.size() || s_[pos_] != '"') Fail("expected a member name");
        std::string key = String();
        Expect(':');
        v.members.emplace_back(std::move(key), Value(depth + 1));
      } while (Eat(','));
      Expect('}');
    } else if (c == '[') {
      pos_++;
      v.kind = JsonValue::Kind::kArray;
      if (Eat(']')) return v;
      do {
        JsonValue e = Value(depth + 1);
        if (e.kind == JsonValue::Kind::kNumber && v.elements.empty()) {
          v.numbers.push_back(e.number);
          continue;
        }
        if (!v.numbers.empty()) {  // a mixed array: numbers become values
          for (double x : v.numbers) {
            JsonValue n;
            n.kind = JsonValue::Kind::kNumber;
            n.number = x;
            v.elements.push_back(std::move(n));
          }
          v.numbers.clear();
          v.numbers.shrink_to_fit();
        }
        v.elements.push_back(std::move(e));
      } while (Eat(','));
      Expect(']');
    } else if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      v.string = String();
    } else if (c == 't') {
      Word("true");
      v.kind = JsonValue::Kind::kBool;
      v.boolean = true;
    } else if (c == 'f') {
      Word("false");
      v.kind = JsonValue::Kind::kBool;
    } else if (c == 'n') {
      Word("null");
    } else {
      v.kind = JsonValue::Kind::kNumber;
      v.number = Number();
    }
    return v;
  }

  // -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?, read by strtod.
  double Number() {
    size_t start = pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') pos_++;
      if (pos_ == from) Fail("malformed number");
    };
    if (s_[pos_] == '-') pos_++;
    if (pos_ < s_.size() && s_[pos_] == '0') pos_++;
    else digits();
    if (pos_ < s_.size() && s_[pos_] == '.') {
      pos_++;
      digits();
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      pos_++;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) pos_++;
      digits();
    }
    double x = std::strtod(s_.substr(start, pos_ - start).c_str(), nullptr);
    return x == 0 ? 0.0 : x;  // no negative zero, as jsonb's numeric has none
  }

  static void AppendUtf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  unsigned Hex4() {
    if (pos_ + 4 > s_.size()) Fail("short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') v |= unsigned(c - '0');
      else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
      else Fail("bad \\u escape");
    }
    return v;
  }
  std::string String() {
    pos_++;  // the opening quote
    std::string out;
    while (true) {
      if (pos_ >= s_.size()) Fail("unterminated string");
      char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) Fail("control character in a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) Fail("unterminated string");
      char e = s_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = Hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
            if (pos_ + 2 > s_.size() || s_[pos_] != '\\' || s_[pos_ + 1] != 'u')
              Fail("lone surrogate");
            pos_ += 2;
            unsigned low = Hex4();
            if (low < 0xDC00 || low >= 0xE000) Fail("lone surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            Fail("lone surrogate");
          }
          AppendUtf8(out, cp);
          break;
        }
        default: Fail("bad escape");
      }
    }
  }

  const std::string& s_;
  size_t pos_ = 0;
  size_t values_ = 0;
};

}  // namespace

JsonValue ParseJson(const std::string& text) { return JsonReader(text).Document(); }

void WriteJson(JsonWriter& j, const JsonValue& v) {
  switch (v.kind) {
    case JsonValue::Kind::kNull: j.Null(); break;
    case JsonValue::Kind::kBool: j.Bool(v.boolean); break;
    case JsonValue::Kind::kNumber: j.Number(v.number); break;
    case JsonValue::Kind::kString: j.String(v.string.c_str()); break;
    case JsonValue::Kind::kArray:
      j.BeginArray();
      for (size_t i = 0; i < v.size(); i++) {
        if (v.IsNumberAt(i)) j.Number(v.NumberAt(i));
        else WriteJson(j, v.At(i));
      }
      j.EndArray();
      break;
    case JsonValue::Kind::kObject:
      j.BeginObject();
      for (const auto& [key, member] : v.members) {
        j.Key(key.c_str());
        WriteJson(j, member);
      }
      j.EndObject();
      break;
  }
}

}  // namespace dperm
