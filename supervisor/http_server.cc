#include "supervisor/http_server.h"

#include <spdlog/spdlog.h>

namespace tandem::supervisor {

namespace {

constexpr std::size_t kMaxRequestBytes = 8192;

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

}  // namespace

HttpServer::HttpServer(zmq::context_t& ctx, Handler handler)
    : socket_(ctx, zmq::socket_type::stream), handler_(std::move(handler)) {
  socket_.set(zmq::sockopt::linger, 0);
}

Status HttpServer::Bind(const std::string& host_port) {
  try {
    socket_.bind("tcp://" + host_port);
  } catch (const zmq::error_t& e) {
    return Status::Unavailable("could not bind internal HTTP on " + host_port + ": " + e.what());
  }
  return Status::Ok();
}

void HttpServer::OnReadable() {
  for (;;) {
    zmq::message_t id, data;
    if (!socket_.recv(id, zmq::recv_flags::dontwait)) return;
    if (!socket_.recv(data, zmq::recv_flags::none)) return;
    const std::string peer = id.to_string();
    if (data.size() == 0) {  // a connect or disconnect notification
      pending_.erase(peer);
      continue;
    }
    std::string& req = pending_[peer];
    req.append(data.data<char>(), data.size());
    if (req.size() > kMaxRequestBytes) {
      Respond(peer, {413, "text/plain", "request too large\n"});
      continue;
    }
    const auto end = req.find("\r\n\r\n");
    if (end == std::string::npos) continue;  // wait for the rest of the headers
    const auto sp1 = req.find(' ');
    const auto sp2 = sp1 == std::string::npos ? sp1 : req.find(' ', sp1 + 1);
    if (sp2 == std::string::npos) {
      Respond(peer, {400, "text/plain", "malformed request line\n"});
      continue;
    }
    const std::string method = req.substr(0, sp1);
    std::string path = req.substr(sp1 + 1, sp2 - sp1 - 1);
    if (auto q = path.find('?'); q != std::string::npos) path.resize(q);
    if (method != "GET" && method != "HEAD") {
      Respond(peer, {405, "text/plain", "only GET\n"});
      continue;
    }
    HttpResponse r = handler_(path);
    if (method == "HEAD") r.body.clear();
    Respond(peer, r);
  }
}

void HttpServer::Respond(const std::string& peer, const HttpResponse& r) {
  pending_.erase(peer);
  const std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " + Reason(r.status) +
                           "\r\nContent-Type: " + r.content_type +
                           "\r\nContent-Length: " + std::to_string(r.body.size()) +
                           "\r\nConnection: close\r\n\r\n";
  try {
    socket_.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    socket_.send(zmq::buffer(head + r.body), zmq::send_flags::dontwait);
    // An empty frame to the peer closes the connection.
    socket_.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
    socket_.send(zmq::message_t(), zmq::send_flags::dontwait);
  } catch (const zmq::error_t& e) {
    spdlog::debug("http: could not answer a client: {}", e.what());
  }
}

}  // namespace tandem::supervisor
