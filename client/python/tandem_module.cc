// The Python binding of LocalReader (pybind11): `import tandem`.
//
//   r = tandem.LocalReader("tandem.r1")
//   time, rows = r.lookup("u2", [42])             # rows: [(row tuple, count), ...]
//   time, rows = r.scan("u2", prefix=[4], at=17)  # or lower=[..], upper=[..]; all keys without
//   r.indexes(); r.latest("u2"); r.reattach()
//
// Datums map to None, bool, int, float and str. Errors raise tandem.Error (with .code, the
// StatusCode name) or one of its subclasses: DataError (the index's error at that time, as a peek
// answers it), NotFound, NotReadable (compacted, not complete yet, not published), ReplicaGone
// (the replica died or restarted: reattach()), PermissionDenied.
// Reads release the GIL: Python threads may share a reader (its reads take turns) or, to read in
// parallel, each use one of their own. A process forked after attaching attaches anew.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

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

Datum ToDatum(const py::handle& h) {
  if (h.is_none()) return Null{};
  if (py::isinstance<py::bool_>(h)) return h.cast<bool>();  // before int: bool is an int
  if (py::isinstance<py::int_>(h)) return h.cast<std::int64_t>();
  if (py::isinstance<py::float_>(h)) return h.cast<double>();
  if (py::isinstance<py::str>(h)) return h.cast<std::string>();
  throw py::type_error("a key datum is None, bool, int, float or str, not " +
                       std::string(py::str(h.get_type())));
}

Row ToRow(const py::handle& seq) {
  if (py::isinstance<py::str>(seq)) throw py::type_error("a key is a list of datums, not a str");
  Row row;
  for (const py::handle& h : py::iter(seq)) row.push_back(ToDatum(h));
  return row;
}

py::object FromDatum(const Datum& d) {
  struct Visit {
    py::object operator()(Null) const { return py::none(); }
    py::object operator()(bool b) const { return py::bool_(b); }
    py::object operator()(std::int64_t i) const { return py::int_(i); }
    py::object operator()(double f) const { return py::float_(f); }
    py::object operator()(const std::string& s) const { return py::str(s); }
  };
  return std::visit(Visit{}, d);
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
