// Result<T>: the value-or-error type every module boundary returns.
// An Error carries one human message that names the file, key or command at fault.
// Exceptions never cross a module boundary; fallible calls return a Result instead.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace tailforge {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}
  Result(Error error) : error_(std::move(error)) {}

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

  const Error& error() const { return error_; }
  const std::string& message() const { return error_.message; }

 private:
  std::optional<T> value_;
  Error error_;
};

// Status is a Result without a value: ok, or an error message.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : failed_(true), error_(std::move(error)) {}

  bool ok() const { return !failed_; }
  explicit operator bool() const { return ok(); }
  const Error& error() const { return error_; }
  const std::string& message() const { return error_.message; }

 private:
  bool failed_ = false;
  Error error_;
};

using Status = Result<void>;

inline Error make_error(std::string message) { return Error{std::move(message)}; }

}  // namespace tailforge
