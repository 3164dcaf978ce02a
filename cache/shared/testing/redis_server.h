// A real redis-server (Debian's) for tests: a child process on 127.0.0.1
// with a free port, no persistence, in its own temporary directory; or a
// three-node Redis Cluster; or one speaking only TLS with a self-signed
// certificate. Header-only test code; not thread-safe. The destructor
// kills and reaps every child, so a failing test leaves none behind.
// Available() is false when redis-server is not installed (tests skip,
// saying scripts/setup.sh installs it).
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cache/shared/redis_connection.h"

namespace kiln::cache::shared::testing {

inline std::string RedisBinary(const char* name) {
  for (const char* dir : {"/usr/bin/", "/usr/local/bin/", "/usr/sbin/"}) {
    std::string path = std::string(dir) + name;
    if (access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

// A loopback port nothing listens on now.
inline uint16_t FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Runs `argv` to completion, output to `log`; its exit status.
inline int RunToEnd(std::vector<std::string> argv, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    std::vector<char*> args;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class RedisServer {
 public:
  struct Flags {
    std::vector<std::string> extra = {};
    bool tls = false;
    bool tls_client_certificates = false;  // tls-auth-clients yes: the CA's certificate is also the client's
    bool cluster = false;
  };

  RedisServer() : RedisServer(Flags{}) {}
  explicit RedisServer(Flags flags) : flags_(std::move(flags)) {
    binary_ = RedisBinary("redis-server");
    if (binary_.empty()) return;
    char pattern[] = "/tmp/kiln-redis-XXXXXX";
    dir_ = mkdtemp(pattern);
    if (flags_.tls && !MakeCertificate()) return;
    for (int attempt = 0; attempt < 5 && !ok(); ++attempt) {
      port_ = FreePort();
      Start();
    }
  }

  ~RedisServer() {
    Kill();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  static bool Available() { return !RedisBinary("redis-server").empty(); }
  bool ok() const { return pid_ > 0 && ready_; }
  uint16_t port() const { return port_; }
  std::string url() const { return std::string(flags_.tls ? "rediss" : "redis") + "://127.0.0.1:" + std::to_string(port_); }
  RedisNode node() const { return RedisNode{"127.0.0.1", port_}; }
  std::string ca_file() const { return (dir_ / "cert.pem").string(); }
  std::string key_file() const { return (dir_ / "key.pem").string(); }
  std::string log() const { return (dir_ / "redis.log").string(); }

  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGCONT);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    ready_ = false;
  }
  // Starts it again on the same port (empty: nothing was persisted).
  bool Restart() {
    Kill();
    Start();
    return ok();
  }
  // SIGSTOP / SIGCONT: a server that accepts connections but never answers.
  void Pause() { kill(pid_, SIGSTOP); }
  void Resume() { kill(pid_, SIGCONT); }

  // One command on a fresh connection (plain only): for checks in tests.
  Result<RedisReply> Command(std::vector<std::string> args) const {
    ConnectionOptions options{.tls = flags_.tls, .tls_ca_file = flags_.tls ? ca_file() : ""};
    if (flags_.tls_client_certificates) {
      options.tls_cert_file = ca_file();
      options.tls_key_file = key_file();
    }
    KILN_ASSIGN_OR_RETURN(auto connection, RedisConnection::Connect(node(), options));
    std::vector<std::string_view> views(args.begin(), args.end());
    return connection->Run(views);
  }

 private:
  bool MakeCertificate() {
    const std::string openssl = RedisBinary("openssl");
    if (openssl.empty()) return false;
    return RunToEnd({openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                     "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key_file(), "-out",
                     ca_file()},
                    log()) == 0;
  }

  void Start() {
    std::vector<std::string> args = {binary_, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                     "--dir", dir_.string(), "--logfile", log(), "--daemonize", "no"};
    if (flags_.tls) {
      args.insert(args.end(), {"--port", "0", "--tls-port", std::to_string(port_), "--tls-cert-file", ca_file(),
                               "--tls-key-file", key_file(), "--tls-ca-cert-file", ca_file(),
                               "--tls-auth-clients", flags_.tls_client_certificates ? "yes" : "no"});
    } else {
      args.insert(args.end(), {"--port", std::to_string(port_)});
    }
    if (flags_.cluster) {
      args.insert(args.end(), {"--cluster-enabled", "yes", "--cluster-config-file", (dir_ / "nodes.conf").string(),
                               "--cluster-node-timeout", "2000"});
    }
    args.insert(args.end(), flags_.extra.begin(), flags_.extra.end());
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      // Never outlives the test (or bench) that started it, even a crashed one.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, STDOUT_FILENO);
      dup2(null, STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    ready_ = false;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < give_up) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {  // exited: the port was taken, say
        pid_ = -1;
        return;
      }
      Result<RedisReply> pong = Command({"PING"});
      if (pong && (pong->IsStatus("PONG") || pong->IsError())) {  // NOAUTH also means it is up
        ready_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  Flags flags_;
  std::string binary_;
  std::filesystem::path dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
  bool ready_ = false;
};

// Three masters joined into one cluster (redis-cli --cluster create).
class RedisCluster {
 public:
  RedisCluster() {
    if (RedisBinary("redis-cli").empty()) return;
    for (int i = 0; i < 3; ++i) nodes_.push_back(std::make_unique<RedisServer>(RedisServer::Flags{.cluster = true}));
    std::vector<std::string> create = {RedisBinary("redis-cli"), "--cluster", "create"};
    for (auto& node : nodes_) {
      if (!node->ok()) return;
      create.push_back("127.0.0.1:" + std::to_string(node->port()));
    }
    create.insert(create.end(), {"--cluster-replicas", "0", "--cluster-yes"});
    if (RunToEnd(create, nodes_[0]->log() + ".create") != 0) return;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!ok_ && std::chrono::steady_clock::now() < give_up) {
      ok_ = true;
      for (auto& node : nodes_) {
        Result<RedisReply> info = node->Command({"CLUSTER", "INFO"});
        ok_ = ok_ && info && info->text.find("cluster_state:ok") != std::string::npos;
      }
      if (!ok_) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  bool ok() const { return ok_; }
  RedisServer& node(size_t i) { return *nodes_[i]; }
  // Every node as a seed: "redis://127.0.0.1:a,127.0.0.1:b,127.0.0.1:c".
  std::string url() const {
    std::string text = "redis://";
    for (size_t i = 0; i < nodes_.size(); ++i) text += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(nodes_[i]->port());
    return text;
  }

 private:
  std::vector<std::unique_ptr<RedisServer>> nodes_;
  bool ok_ = false;
};

}  // namespace kiln::cache::shared::testing
