// Abuse of the internal HTTP endpoint (issue 12, item 7; DESIGN §12 "read-only and bounded"):
// connection churn, connections held open without a request, over-size and malformed requests.
// 1,000 connections left the supervisor at 61 MB; now at most --http-max-connections are open at
// once (a newer one closes the oldest, so a probe still gets in), a request must arrive within
// --http-request-timeout, and a head is at most 8 KiB.
#include <poll.h>
#include <unistd.h>

#include "adversarial/adversarial.h"

namespace tandem::testing::adversarial {
namespace {

// What the server sent on `fd` until it closed it (or `limit` passed).
std::string ReadUntilClosed(int fd, std::chrono::milliseconds limit) {
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return out + "(still open)";
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

TEST(HttpAbuse, ThousandsOfHeldConnectionsNeitherKeepAProbeOutNorGrowTheSupervisor) {
  Target target;
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  const pid_t supervisor = target.sup().pid();
  const int port = target.sup().http_port();
  std::vector<std::uint64_t> rss;
  for (int round = 0; round < 4; ++round) {
    std::vector<int> fds;
    for (int i = 0; i < 1000; ++i) {
      const int fd = tools::ConnectLoopback(port);
      ASSERT_GE(fd, 0) << "connection " << i;
      // Half send the start of a request and never finish it (slowloris), half send nothing.
      if (i % 2 == 0) {
        const std::string partial = "GET /metrics HTTP/1.1\r\nX-Slow: ";
        ASSERT_EQ(write(fd, partial.data(), partial.size()), static_cast<ssize_t>(partial.size()));
      }
      fds.push_back(fd);
    }
    // While they are all held open, probes are answered.
    EXPECT_EQ(HttpGet(port, "/livez").status, 200) << "round " << round;
    EXPECT_EQ(HttpGet(port, "/readyz").status, 200) << "round " << round;
    for (int fd : fds) close(fd);
    ASSERT_TRUE(Eventually(
        [&] {
          return MetricValue(HttpGet(port, "/metrics").body, "tandem_http_connections_open") <=
                 1;  // the /metrics request itself
        },
        10s))
        << HttpGet(port, "/metrics").body;
    rss.push_back(RssBytes(supervisor));
  }
  std::printf("supervisor RSS after each round of 1,000 connections: %.1f %.1f %.1f %.1f MiB\n",
              rss[0] / 1048576.0, rss[1] / 1048576.0, rss[2] / 1048576.0, rss[3] / 1048576.0);
  if (kRssIsMeaningful) {
    EXPECT_LT(rss[3], rss[0] + (2u << 20));  // a plateau, not growth per connection
    EXPECT_LT(rss[3], 40u << 20);
  }
  const std::string metrics = HttpGet(port, "/metrics").body;
  EXPECT_GE(MetricValue(metrics, "tandem_http_connections_total{outcome=\"evicted\"}"), 3000);
  target.ExpectStillServing();
}

TEST(HttpAbuse, ASlowRequestIsClosedAfterTheTimeoutAndOversizeOrMalformedOnesAreRefused) {
  Target target({"--http-request-timeout", "1"});
  ASSERT_TRUE(target.Start()) << target.sup().Log();
  const int port = target.sup().http_port();
  {  // never completes its request: closed after about a second, without an answer
    const int fd = tools::ConnectLoopback(port);
    ASSERT_GE(fd, 0);
    const std::string partial = "GET /livez HTTP/1.1\r\n";
    ASSERT_EQ(write(fd, partial.data(), partial.size()), static_cast<ssize_t>(partial.size()));
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(ReadUntilClosed(fd, 10s), "");
    EXPECT_GE(std::chrono::steady_clock::now() - start, 900ms);
    close(fd);
  }
  auto exchange = [&](const std::string& request) {
    const int fd = tools::ConnectLoopback(port);
    EXPECT_GE(fd, 0);
    (void)!write(fd, request.data(), request.size());
    std::string answer = ReadUntilClosed(fd, 10s);
    close(fd);
    return answer.substr(0, answer.find("\r\n"));
  };
  EXPECT_EQ(exchange("GET /livez HTTP/1.1\r\nX-Big: " + std::string(9000, 'a') + "\r\n\r\n"),
            "HTTP/1.1 413 Payload Too Large");
  EXPECT_EQ(exchange(std::string(20000, 'G')), "HTTP/1.1 413 Payload Too Large");
  EXPECT_EQ(exchange("GET livez HTTP/1.1\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(exchange("GET /livez HTTP/2.0\r\n\r\n"), "HTTP/1.1 505 HTTP Version Not Supported");
  EXPECT_EQ(exchange("GET /livez HTTP/1.1\r\nno colon\r\n\r\n"), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(exchange("POST /livez HTTP/1.1\r\n\r\n"), "HTTP/1.1 405 Method Not Allowed");
  EXPECT_EQ(exchange("GET /livez?x=1 HTTP/1.0\r\nHost: a\r\n\r\n"), "HTTP/1.1 200 OK");
  const std::string metrics = HttpGet(port, "/metrics").body;
  EXPECT_GE(MetricValue(metrics, "tandem_http_connections_total{outcome=\"timed_out\"}"), 1);
  EXPECT_GE(MetricValue(metrics, "tandem_http_connections_total{outcome=\"bad\"}"), 6);
  target.ExpectStillServing();
}

}  // namespace
}  // namespace tandem::testing::adversarial
