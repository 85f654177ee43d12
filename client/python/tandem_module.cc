// The Python binding of LocalReader (pybind11): `import tandem`.
//
//   r = tandem.LocalReader("tandem.r1")
//   time, rows = r.lookup("u2", [42])             # rows: [(row tuple, count), ...]
//   time, rows = r.scan("u2", prefix=[4], at=17)  # or lower=[..], upper=[..]; all keys without
//   r.indexes(); r.latest("u2"); r.reattach()
//
// Datums map to None, bool, int, float, str, and for the types of DESIGN §16: numeric
// decimal.Decimal (its scale kept: Decimal('12.50')), bytea bytes, date datetime.date, time
// datetime.time, timestamp a naive datetime.datetime, timestamptz a datetime.datetime in UTC
// (tzinfo=datetime.timezone.utc), interval datetime.timedelta, uuid uuid.UUID — and back, for
// keys (an aware datetime is a timestamptz, any zone; bytes, bytearray and memoryview are bytea;
// a timedelta is an interval of days and microseconds). A value Python's type cannot hold raises
// ValueError rather than become another value: an interval with months (a month is no fixed
// timedelta: cast it in SQL, or read it in days), a date or timestamp outside the years 1 to
// 9999 (BC too), the time 24:00:00. Errors raise tandem.Error (with .code, the
// StatusCode name) or one of its subclasses: DataError (the index's error at that time, as a peek
// answers it), NotFound, NotReadable (compacted, not complete yet, not published), ReplicaGone
// (the replica died or restarted: reattach()), PermissionDenied.
// Reads release the GIL: Python threads may share a reader (its reads take turns) or, to read in
// parallel, each use one of their own. A process forked after attaching attaches anew.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/datetime.h"
#include "base/datum_text.h"
#include "base/numeric.h"
#include "client/local_reader.h"

namespace py = pybind11;

namespace tandem {
namespace {

// The exception classes, created at import.
struct Errors {
  py::object base, data, not_found, not_readable, gone, permission;
};
Errors& errors() {
  static Errors* e = new Errors();  // lives as long as the interpreter's module
  return *e;
}

[[noreturn]] void Raise(const Status& s) {
  py::object type = errors().base;
  switch (s.code()) {
    case StatusCode::kDataError:
      type = errors().data;
      break;
    case StatusCode::kNotFound:
      type = errors().not_found;
      break;
    case StatusCode::kUnavailable:
      type = errors().gone;
      break;
    case StatusCode::kFailedPrecondition:
      type = s.message().find("permission denied") != std::string::npos ? errors().permission
                                                                        : errors().not_readable;
      break;
    default:
      break;
  }
  py::object error = type(s.message());
  error.attr("code") = StatusCodeName(s.code());
  PyErr_SetObject(type.ptr(), error.ptr());
  throw py::error_already_set();
}

template <typename T>
T OrRaise(Result<T> r) {
  if (!r.ok()) Raise(r.status());
  return std::move(r).value();
}

// Python's modules and values the datums map to, imported once (the GIL is held whenever these
// are used).
struct PythonTypes {
  py::object date, time, datetime, timedelta, utc, decimal, uuid;
  py::object epoch, epoch_utc;  // datetime(1970, 1, 1), naive and in UTC
  static const PythonTypes& Get() {
    static const PythonTypes* types = [] {
      auto* t = new PythonTypes();  // lives as long as the interpreter's module
      const py::module_ dt = py::module_::import("datetime");
      t->date = dt.attr("date");
      t->time = dt.attr("time");
      t->datetime = dt.attr("datetime");
      t->timedelta = dt.attr("timedelta");
      t->utc = dt.attr("timezone").attr("utc");
      t->decimal = py::module_::import("decimal").attr("Decimal");
      t->uuid = py::module_::import("uuid").attr("UUID");
      t->epoch = t->datetime(1970, 1, 1);
      t->epoch_utc = t->datetime(1970, 1, 1, py::arg("tzinfo") = t->utc);
      return t;
    }();
    return *types;
  }
};

constexpr std::int64_t kUnixEpochOrdinal = 719163;  // date(1970, 1, 1).toordinal()

// A timedelta's whole length in microseconds; beyond int64 a ValueError.
std::int64_t TimedeltaMicros(const py::object& delta) {
  const auto days = delta.attr("days").cast<std::int64_t>();
  const auto seconds = delta.attr("seconds").cast<std::int64_t>();      // [0, 86400)
  const auto micros = delta.attr("microseconds").cast<std::int64_t>();  // [0, 10^6)
  std::int64_t total = 0;
  if (__builtin_mul_overflow(days, kMicrosPerDay, &total) ||
      __builtin_add_overflow(total, seconds * kMicrosPerSecond + micros, &total)) {
    throw py::value_error("a datetime beyond the range of a timestamp");
  }
  return total;
}

Datum ToDatum(const py::handle& h) {
  const PythonTypes& py_types = PythonTypes::Get();
  if (h.is_none()) return Null{};
  if (py::isinstance<py::bool_>(h)) return h.cast<bool>();  // before int: bool is an int
  if (py::isinstance<py::int_>(h)) return h.cast<std::int64_t>();
  if (py::isinstance<py::float_>(h)) return h.cast<double>();
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  if (py::isinstance<py::bytes>(h) || py::isinstance<py::bytearray>(h) ||
      py::isinstance<py::memoryview>(h)) {
    PyObject* bytes = PyBytes_FromObject(h.ptr());  // bytes of any buffer
    if (bytes == nullptr) throw py::error_already_set();
    return Bytes{py::reinterpret_steal<py::bytes>(bytes).cast<std::string>()};
  }
  if (py::isinstance(h, py_types.decimal)) {
    auto n = ParseNumeric(py::str(h).cast<std::string>());
    if (!n.ok())
      throw py::value_error("Decimal " + std::string(py::str(h)) + ": " + n.status().message());
    return *n;
  }
  // datetime before date: a datetime is a date.
  if (py::isinstance(h, py_types.datetime)) {
    if (h.attr("tzinfo").is_none() || h.attr("utcoffset")().is_none()) {
      return Timestamp{TimedeltaMicros(py::reinterpret_borrow<py::object>(h) - py_types.epoch)};
    }
    return TimestampTz{TimedeltaMicros(py::reinterpret_borrow<py::object>(h) -
                                       py_types.epoch_utc)};  // the instant, any zone
  }
  if (py::isinstance(h, py_types.date)) {
    return Date{
        static_cast<std::int32_t>(h.attr("toordinal")().cast<std::int64_t>() - kUnixEpochOrdinal)};
  }
  if (py::isinstance(h, py_types.time)) {
    if (!h.attr("tzinfo").is_none()) {
      throw py::type_error("a time with a zone (timetz) is not a datum; give a naive time");
    }
    const auto part = [&](const char* name) { return h.attr(name).cast<std::int64_t>(); };
    return TimeOfDay{((part("hour") * 60 + part("minute")) * 60 + part("second")) *
                         kMicrosPerSecond +
                     part("microsecond")};
  }
  if (py::isinstance(h, py_types.timedelta)) {
    const std::int64_t days = h.attr("days").cast<std::int64_t>();
    if (days < std::numeric_limits<std::int32_t>::min() ||
        days > std::numeric_limits<std::int32_t>::max()) {
      throw py::value_error("a timedelta of more days than an interval holds");
    }
    return Interval{0, static_cast<std::int32_t>(days),
                    h.attr("seconds").cast<std::int64_t>() * kMicrosPerSecond +
                        h.attr("microseconds").cast<std::int64_t>()};
  }
  if (py::isinstance(h, py_types.uuid)) {
    const std::string bytes = h.attr("bytes").cast<std::string>();
    Uuid u;
    std::memcpy(u.bytes.data(), bytes.data(), u.bytes.size());  // UUID.bytes is 16 bytes
    return u;
  }
  throw py::type_error(
      "a key datum is None, bool, int, float, str, bytes, decimal.Decimal, datetime.date, "
      "datetime.time, datetime.datetime, datetime.timedelta or uuid.UUID, not " +
      std::string(py::str(h.get_type())));
}

Row ToRow(const py::handle& seq) {
  if (py::isinstance<py::str>(seq)) throw py::type_error("a key is a list of datums, not a str");
  Row row;
  for (const py::handle& h : py::iter(seq)) row.push_back(ToDatum(h));
  return row;
}

// A value Python's type cannot hold (a BC date, 24:00:00, an interval with months) is a
// ValueError naming it, never another value.
[[noreturn]] void Unrepresentable(const Datum& d, const char* python_type, const char* why) {
  throw py::value_error(DatumText(d) + " has no " + python_type + " (" + why + ")");
}

py::object FromDatum(const Datum& d) {
  const PythonTypes& py_types = PythonTypes::Get();
  struct Visit {
    const PythonTypes& t;
    const Datum& d;
    py::object operator()(Null) const { return py::none(); }
    py::object operator()(bool b) const { return py::bool_(b); }
    py::object operator()(std::int64_t i) const { return py::int_(i); }
    py::object operator()(double f) const { return py::float_(f); }
    py::object operator()(const std::string& s) const { return py::str(s); }
    py::object operator()(const Numeric& n) const { return t.decimal(NumericText(n)); }
    py::object operator()(const Bytes& b) const { return py::bytes(b.bytes); }
    py::object operator()(Date date) const {
      // Python's dates are the years 1 to 9999: ordinals 1 to 3652059.
      const std::int64_t ordinal = std::int64_t{date.days} + kUnixEpochOrdinal;
      if (ordinal < 1 || ordinal > 3652059) {
        Unrepresentable(d, "datetime.date", "Python's dates are the years 1 to 9999");
      }
      return t.date.attr("fromordinal")(ordinal);
    }
    py::object operator()(TimeOfDay time) const {
      if (time.micros >= kMicrosPerDay) {
        Unrepresentable(d, "datetime.time", "Python's times end before 24:00:00");
      }
      const std::int64_t s = time.micros / kMicrosPerSecond;
      return t.time(s / 3600, s / 60 % 60, s % 60, time.micros % kMicrosPerSecond);
    }
    py::object operator()(Timestamp ts) const { return Shifted(t.epoch, ts.micros, "naive"); }
    py::object operator()(TimestampTz ts) const { return Shifted(t.epoch_utc, ts.micros, "UTC"); }
    py::object operator()(const Interval& i) const {
      if (i.months != 0) {
        Unrepresentable(d, "datetime.timedelta", "a month is no fixed length of time");
      }
      return t.timedelta(py::arg("days") = i.days, py::arg("microseconds") = i.micros);
    }
    py::object operator()(const Uuid& u) const {
      return t.uuid(py::arg("bytes") =
                        py::bytes(reinterpret_cast<const char*>(u.bytes.data()), u.bytes.size()));
    }
    // epoch + micros, as a datetime (years 1 to 9999).
    py::object Shifted(const py::object& epoch, std::int64_t micros, const char*) const {
      const std::int64_t days = micros / kMicrosPerDay - (micros % kMicrosPerDay < 0 ? 1 : 0);
      if (days + kUnixEpochOrdinal < 1 || days + kUnixEpochOrdinal > 3652059) {
        Unrepresentable(d, "datetime.datetime", "Python's datetimes are the years 1 to 9999");
      }
      const std::int64_t rest = micros - days * kMicrosPerDay;  // in range: the days are
      return epoch + t.timedelta(py::arg("days") = days, py::arg("microseconds") = rest);
    }
  };
  return std::visit(Visit{py_types, d}, d);
}

py::tuple FromAnswer(const LocalAnswer& a) {
  py::list rows;
  for (const auto& [row, count] : a.rows) {
    py::tuple t(row.size());
    for (std::size_t i = 0; i < row.size(); ++i) t[i] = FromDatum(row[i]);
    rows.append(py::make_tuple(t, count));
  }
  return py::make_tuple(a.time, rows);
}

GlobalId ParseId(const std::string& text) {
  auto id = GlobalId::Parse(text);
  if (!id) throw py::value_error("'" + text + "' is not a collection id (u1, s2, t3)");
  return *id;
}

class PyLocalReader {
 public:
  explicit PyLocalReader(const std::string& segment) {
    py::gil_scoped_release unlocked;
    auto r = LocalReader::Attach(segment);
    if (!r.ok()) {
      py::gil_scoped_acquire locked;
      Raise(r.status());
    }
    reader_ = std::move(r).value();
  }

  py::tuple Lookup(const std::string& index, const py::object& key, std::optional<Time> at) {
    const Row k = ToRow(key);
    const GlobalId id = ParseId(index);
    Result<LocalAnswer> a = Status::Internal("not read");
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mu_);
      a = reader_->Lookup(id, k, at);
    }
    return FromAnswer(OrRaise(std::move(a)));
  }

  py::tuple Scan(const std::string& index, const py::object& prefix, const py::object& lower,
                 const py::object& upper, std::optional<Time> at) {
    KeyRange range;
    if (!prefix.is_none()) range.prefix = ToRow(prefix);
    if (!lower.is_none()) range.lower = ToRow(lower);
    if (!upper.is_none()) range.upper = ToRow(upper);
    const GlobalId id = ParseId(index);
    Result<LocalAnswer> a = Status::Internal("not read");
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mu_);
      a = reader_->Scan(id, range, at);
    }
    return FromAnswer(OrRaise(std::move(a)));
  }

  Time Latest(const std::string& index) {
    const GlobalId id = ParseId(index);
    Result<Time> t = Status::Internal("not read");
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mu_);
      t = reader_->LatestReadable(id);
    }
    return OrRaise(std::move(t));
  }

  py::list Indexes() {
    Result<std::vector<LocalIndexInfo>> indexes = Status::Internal("not read");
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mu_);
      indexes = reader_->Indexes();
    }
    py::list out;
    for (const LocalIndexInfo& i : OrRaise(std::move(indexes))) {
      py::dict d;
      d["id"] = i.id.ToString();
      d["as_of"] = i.as_of;
      d["since"] = i.since.empty() ? py::object(py::none()) : py::object(py::int_(i.since.time()));
      d["upper"] = i.upper.empty() ? py::object(py::none()) : py::object(py::int_(i.upper.time()));
      d["updates"] = i.updates;
      d["bytes"] = i.bytes;
      out.append(d);
    }
    return out;
  }

  void Reattach() {
    Status s;
    {
      py::gil_scoped_release unlocked;
      std::lock_guard<std::mutex> one_at_a_time(mu_);
      s = reader_->Reattach();
    }
    if (!s.ok()) Raise(s);
  }

  std::uint64_t generation() const { return reader_->generation(); }
  std::uint32_t workers() const { return reader_->workers(); }

 private:
  // A tandem.LocalReader may be shared by Python threads (reads release the GIL), but a
  // LocalReader reads one thing at a time: its reads take turns here.
  std::mutex mu_;
  std::unique_ptr<LocalReader> reader_;
};

}  // namespace
}  // namespace tandem

PYBIND11_MODULE(tandem, m) {
  using tandem::PyLocalReader;
  m.doc() = "Read a Tandem replica's indexes in place from this host (LocalReader).";
  auto& e = tandem::errors();
  e.base = py::reinterpret_steal<py::object>(
      PyErr_NewException("tandem.Error", PyExc_RuntimeError, nullptr));
  auto sub = [&](const char* name) {
    return py::reinterpret_steal<py::object>(PyErr_NewException(name, e.base.ptr(), nullptr));
  };
  e.data = sub("tandem.DataError");
  e.not_found = sub("tandem.NotFound");
  e.not_readable = sub("tandem.NotReadable");
  e.gone = sub("tandem.ReplicaGone");
  e.permission = sub("tandem.PermissionDenied");
  m.attr("Error") = e.base;
  m.attr("DataError") = e.data;
  m.attr("NotFound") = e.not_found;
  m.attr("NotReadable") = e.not_readable;
  m.attr("ReplicaGone") = e.gone;
  m.attr("PermissionDenied") = e.permission;

  py::class_<PyLocalReader>(m, "LocalReader")
      .def(py::init<const std::string&>(), py::arg("segment"),
           "Attach to the replica whose segment is /dev/shm/<segment> (e.g. 'tandem.r1').")
      .def("lookup", &PyLocalReader::Lookup, py::arg("index"), py::arg("key"),
           py::arg("at") = py::none(),
           "(time, [(row, count), ...]) of the rows under `key` (every key column) at `at` "
           "(None: the latest readable time).")
      .def("scan", &PyLocalReader::Scan, py::arg("index"), py::arg("prefix") = py::none(),
           py::arg("lower") = py::none(), py::arg("upper") = py::none(), py::arg("at") = py::none(),
           "(time, [(row, count), ...]) of the rows whose key starts with `prefix` and lies in "
           "[lower, upper), worker part by worker part.")
      .def("latest", &PyLocalReader::Latest, py::arg("index"),
           "The latest time every part of `index` answers exactly.")
      .def("indexes", &PyLocalReader::Indexes, "The indexes the segment publishes now.")
      .def("reattach", &PyLocalReader::Reattach,
           "Attach again to whatever replica now has the name (after ReplicaGone).")
      .def_property_readonly("generation", &PyLocalReader::generation)
      .def_property_readonly("workers", &PyLocalReader::workers);
}
