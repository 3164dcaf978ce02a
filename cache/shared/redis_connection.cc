#include "cache/shared/redis_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "cache/shared/resp_framing.h"

namespace kiln::cache::shared {
namespace {

using Clock = std::chrono::steady_clock;

Error UnavailableAt(const RedisNode& node, std::string why) {
  return UnavailableError("shared tier " + node.ToString() + ": " + why).WithReason("shared_unavailable");
}

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  if (code == 0) return "TLS error";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return text;
}

// hiredis builds replies through these, straight into RedisReply trees: a
// child lives in its parent's `elements` (sized when the array header is
// read, never resized), so only a root is ever freed. An array header may
// announce any count before a single element arrives; past
// kMaxArrayElements the reply is refused instead of allocated (hiredis's
// own builder would calloc the whole count: "*2000000000" was an OOM).
constexpr int kMaxArrayElements = 1 << 16;

void* Place(const redisReadTask* task, RedisReply reply) {
  if (task->parent != nullptr) {
    auto* parent = static_cast<RedisReply*>(task->parent->obj);
    if (task->idx < 0 || static_cast<size_t>(task->idx) >= parent->elements.size()) return nullptr;
    RedisReply& slot = parent->elements[static_cast<size_t>(task->idx)];
    slot = std::move(reply);
    return &slot;
  }
  return new (std::nothrow) RedisReply(std::move(reply));
}

void* CreateString(const redisReadTask* task, char* text, size_t length) {
  RedisReply reply;
  reply.kind = task->type == REDIS_REPLY_ERROR    ? RedisReply::Kind::kError
               : task->type == REDIS_REPLY_STATUS ? RedisReply::Kind::kStatus
                                                  : RedisReply::Kind::kString;
  reply.text.assign(text, length);
  return Place(task, std::move(reply));
}

void* CreateArray(const redisReadTask* task, int elements) {
  if (elements < 0 || elements > kMaxArrayElements) return nullptr;  // hiredis reports it as an error
  RedisReply reply;
  reply.kind = RedisReply::Kind::kArray;
  reply.elements.resize(static_cast<size_t>(elements));
  return Place(task, std::move(reply));
}

void* CreateInteger(const redisReadTask* task, long long value) {
  RedisReply reply;
  reply.kind = RedisReply::Kind::kInteger;
  reply.integer = value;
  return Place(task, std::move(reply));
}

void* CreateNil(const redisReadTask* task) { return Place(task, RedisReply()); }

void FreeReply(void* reply) { delete static_cast<RedisReply*>(reply); }

redisReplyObjectFunctions kReplyFunctions = {CreateString, CreateArray, CreateInteger, CreateNil, FreeReply};

// `commands` in RESP, as Redis reads them; nullopt when hiredis cannot.
std::optional<std::string> FormatCommands(const std::vector<RedisConnection::Command>& commands) {
  std::string out;
  for (const RedisConnection::Command& command : commands) {
    std::vector<const char*> argv;
    std::vector<size_t> lengths;
    for (std::string_view arg : command) {
      argv.push_back(arg.data());
      lengths.push_back(arg.size());
    }
    char* formatted = nullptr;
    const int length = redisFormatCommandArgv(&formatted, static_cast<int>(argv.size()), argv.data(), lengths.data());
    if (length < 0 || formatted == nullptr) return std::nullopt;
    out.append(formatted, static_cast<size_t>(length));
    redisFreeCommand(formatted);
  }
  return out;
}

// Connects a non-blocking socket to one of `node`'s addresses by `deadline`.
Result<int> ConnectSocket(const RedisNode& node, Clock::time_point deadline) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(node.port);
  if (int rc = getaddrinfo(node.host.c_str(), port.c_str(), &hints, &found); rc != 0)
    return UnavailableAt(node, std::string("cannot resolve host: ") + gai_strerror(rc));
  std::string last_error = "no address";
  int connected = -1;
  for (addrinfo* a = found; a != nullptr && connected < 0; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
      pollfd p{.fd = fd, .events = POLLOUT, .revents = 0};
      int soerr = 0;
      socklen_t len = sizeof(soerr);
      const int ready = poll(&p, 1, RemainingMs(deadline));
      if (ready == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) == 0 && soerr == 0) {
        connected = fd;
        break;
      }
      last_error = ready == 0 ? "connect timed out" : std::strerror(soerr != 0 ? soerr : errno);
    } else {
      last_error = std::strerror(errno);
    }
    close(fd);
  }
  freeaddrinfo(found);
  if (connected < 0) return UnavailableAt(node, "cannot connect: " + last_error);
  const int one = 1;
  setsockopt(connected, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return connected;
}

}  // namespace

void ApplyTlsEnvironment(ConnectionOptions& options) {
  if (const char* ca = std::getenv("KILN_SHARED_TLS_CA")) options.tls_ca_file = ca;
  if (const char* cert = std::getenv("KILN_SHARED_TLS_CERT")) options.tls_cert_file = cert;
  if (const char* key = std::getenv("KILN_SHARED_TLS_KEY")) options.tls_key_file = key;
}

struct RedisConnection::Tls {
  SSL_CTX* context = nullptr;
  SSL* ssl = nullptr;
  ~Tls() {
    if (ssl != nullptr) SSL_free(ssl);
    if (context != nullptr) SSL_CTX_free(context);
  }
};

RedisConnection::RedisConnection(RedisNode node, ConnectionOptions options, int fd)
    : node_(std::move(node)), options_(std::move(options)), fd_(fd) {}

RedisConnection::~RedisConnection() {
  if (tls_ && tls_->ssl != nullptr && !broken_) SSL_shutdown(tls_->ssl);
  tls_.reset();
  if (fd_ >= 0) close(fd_);
}

Error RedisConnection::Broken(std::string why) {
  broken_ = true;
  return UnavailableAt(node_, std::move(why));
}

Result<std::unique_ptr<RedisConnection>> RedisConnection::Connect(const RedisNode& node,
                                                                   const ConnectionOptions& options) {
  const Clock::time_point deadline = Clock::now() + options.connect_timeout;
  KILN_ASSIGN_OR_RETURN(int fd, ConnectSocket(node, deadline));
  std::unique_ptr<RedisConnection> connection(new RedisConnection(node, options, fd));
  if (!options.tls) return connection;

  auto tls = std::make_unique<Tls>();
  tls->context = SSL_CTX_new(TLS_client_method());
  if (tls->context == nullptr) return connection->Broken("cannot set up TLS: " + OpenSslError());
  SSL_CTX_set_verify(tls->context, SSL_VERIFY_PEER, nullptr);
  SSL_CTX_set_default_verify_paths(tls->context);
  if (!options.tls_ca_file.empty() &&
      SSL_CTX_load_verify_locations(tls->context, options.tls_ca_file.c_str(), nullptr) != 1)
    return connection->Broken("cannot read the CA file " + options.tls_ca_file + ": " + OpenSslError());
  if (!options.tls_cert_file.empty() &&
      (SSL_CTX_use_certificate_chain_file(tls->context, options.tls_cert_file.c_str()) != 1 ||
       SSL_CTX_use_PrivateKey_file(tls->context,
                                   (options.tls_key_file.empty() ? options.tls_cert_file : options.tls_key_file).c_str(),
                                   SSL_FILETYPE_PEM) != 1))
    return connection->Broken("cannot read the client certificate " + options.tls_cert_file + ": " + OpenSslError());
  tls->ssl = SSL_new(tls->context);
  if (tls->ssl == nullptr) return connection->Broken("cannot set up TLS: " + OpenSslError());
  SSL_set_fd(tls->ssl, fd);
  SSL_set_tlsext_host_name(tls->ssl, node.host.c_str());
  in6_addr ignored;
  const bool ip = inet_pton(AF_INET, node.host.c_str(), &ignored) == 1 || inet_pton(AF_INET6, node.host.c_str(), &ignored) == 1;
  if (ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(tls->ssl), node.host.c_str()) != 1
         : SSL_set1_host(tls->ssl, node.host.c_str()) != 1)
    return connection->Broken("cannot set the name to verify: " + OpenSslError());
  connection->tls_ = std::move(tls);
  for (;;) {
    const int rc = SSL_connect(connection->tls_->ssl);
    if (rc == 1) break;
    const int why = SSL_get_error(connection->tls_->ssl, rc);
    if (why != SSL_ERROR_WANT_READ && why != SSL_ERROR_WANT_WRITE) {
      const long verify = SSL_get_verify_result(connection->tls_->ssl);
      std::string what = verify != X509_V_OK ? std::string("certificate refused: ") +
                                                    X509_verify_cert_error_string(verify)
                                              : OpenSslError();
      return connection->Broken("TLS handshake failed: " + what);
    }
    KILN_RETURN_IF_ERROR(connection->WaitFor(why == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline));
  }
  return connection;
}

std::unique_ptr<RedisConnection> RedisConnection::FromSocket(int fd, RedisNode node, const ConnectionOptions& options) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  ConnectionOptions plain = options;
  plain.tls = false;
  return std::unique_ptr<RedisConnection>(new RedisConnection(std::move(node), std::move(plain), fd));
}

Status RedisConnection::WaitFor(short events, Clock::time_point deadline) {
  pollfd p{.fd = fd_, .events = events, .revents = 0};
  for (;;) {
    const int ready = poll(&p, 1, RemainingMs(deadline));
    if (ready > 0) return {};
    if (ready == 0) return Broken("timed out");
    if (errno != EINTR) return Broken(std::string("poll: ") + std::strerror(errno));
  }
}

Status RedisConnection::WriteAll(std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    if (tls_) {
      const int rc = SSL_write(tls_->ssl, bytes.data(), static_cast<int>(std::min<size_t>(bytes.size(), 1 << 30)));
      if (rc > 0) {
        bytes.remove_prefix(static_cast<size_t>(rc));
        continue;
      }
      const int why = SSL_get_error(tls_->ssl, rc);
      if (why != SSL_ERROR_WANT_READ && why != SSL_ERROR_WANT_WRITE) return Broken("TLS write: " + OpenSslError());
      KILN_RETURN_IF_ERROR(WaitFor(why == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline));
      continue;
    }
    const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      KILN_RETURN_IF_ERROR(WaitFor(POLLOUT, deadline));
    } else if (n < 0 && errno != EINTR) {
      return Broken(std::string("write: ") + std::strerror(errno));
    }
  }
  return {};
}

Result<size_t> RedisConnection::ReadSome(char* buffer, size_t size, Clock::time_point deadline) {
  for (;;) {
    if (tls_) {
      const int rc = SSL_read(tls_->ssl, buffer, static_cast<int>(size));
      if (rc > 0) return static_cast<size_t>(rc);
      const int why = SSL_get_error(tls_->ssl, rc);
      if (why == SSL_ERROR_ZERO_RETURN) return Broken("the server closed the connection");
      if (why != SSL_ERROR_WANT_READ && why != SSL_ERROR_WANT_WRITE) return Broken("TLS read: " + OpenSslError());
      KILN_RETURN_IF_ERROR(WaitFor(why == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline));
      continue;
    }
    const ssize_t n = recv(fd_, buffer, size, 0);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) return Broken("the server closed the connection");
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      KILN_RETURN_IF_ERROR(WaitFor(POLLIN, deadline));
    } else if (errno != EINTR) {
      return Broken(std::string("read: ") + std::strerror(errno));
    }
  }
}

Result<std::vector<RedisReply>> RedisConnection::Pipeline(const std::vector<Command>& commands) {
  if (broken_) return UnavailableAt(node_, "connection already broken");
  const Clock::time_point deadline = Clock::now() + options_.command_timeout;
  std::optional<std::string> out = FormatCommands(commands);
  if (!out) return Broken("cannot format a command");
  KILN_RETURN_IF_ERROR(WriteAll(*out, deadline));

  std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreateWithFunctions(&kReplyFunctions),
                                                              redisReaderFree);
  if (!reader) return Broken("out of memory");
  std::vector<RedisReply> replies;
  std::vector<char> buffer(64 << 10);
  std::string fed;  // every byte given to the reader, for CheckRespFraming
  size_t received = 0;
  while (replies.size() < commands.size()) {
    void* raw = nullptr;
    if (redisReaderGetReply(reader.get(), &raw) != REDIS_OK)
      return Broken(std::string("malformed reply: ") + reader->errstr);
    if (raw != nullptr) {
      std::unique_ptr<RedisReply> reply(static_cast<RedisReply*>(raw));
      replies.push_back(std::move(*reply));
      continue;
    }
    KILN_ASSIGN_OR_RETURN(size_t n, ReadSome(buffer.data(), buffer.size(), deadline));
    received += n;
    if (received > options_.max_reply_bytes) {
      broken_ = true;
      return ResourceExhaustedError("shared tier " + node_.ToString() + ": a reply over " +
                                    std::to_string(options_.max_reply_bytes) + " bytes")
          .WithReason("shared_reply_too_large");
    }
    if (redisReaderFeed(reader.get(), buffer.data(), n) != REDIS_OK)
      return Broken(std::string("malformed reply: ") + reader->errstr);
    fed.append(buffer.data(), n);
  }
  // hiredis 0.14 does not look at the CRLF after a bulk payload.
  if (Status framed = CheckRespFraming(fed, commands.size()); !framed) return Broken(framed.error().message);
  return replies;
}

Status RedisConnection::Send(const std::vector<Command>& commands) {
  if (broken_) return UnavailableAt(node_, "connection already broken");
  std::optional<std::string> out = FormatCommands(commands);
  if (!out) return Broken("cannot format a command");
  return WriteAll(*out, Clock::now() + options_.command_timeout);
}

Result<std::optional<RedisReply>> RedisConnection::Receive(std::chrono::milliseconds wait) {
  if (broken_) return UnavailableAt(node_, "connection already broken");
  const Clock::time_point until = Clock::now() + wait;
  std::vector<char> buffer(16 << 10);
  for (;;) {
    Result<std::optional<size_t>> length = RespValueLength(received_);
    if (!length) return Broken(length.error().message);
    if (*length) {
      std::unique_ptr<redisReader, void (*)(redisReader*)> reader(redisReaderCreateWithFunctions(&kReplyFunctions),
                                                                  redisReaderFree);
      if (!reader) return Broken("out of memory");
      void* raw = nullptr;
      if (redisReaderFeed(reader.get(), received_.data(), **length) != REDIS_OK ||
          redisReaderGetReply(reader.get(), &raw) != REDIS_OK || raw == nullptr)
        return Broken(std::string("malformed reply: ") + reader->errstr);
      std::unique_ptr<RedisReply> reply(static_cast<RedisReply*>(raw));
      received_.erase(0, **length);
      return std::optional<RedisReply>(std::move(*reply));
    }
    if (received_.size() > options_.max_reply_bytes) {
      broken_ = true;
      return ResourceExhaustedError("shared tier " + node_.ToString() + ": a message over " +
                                    std::to_string(options_.max_reply_bytes) + " bytes")
          .WithReason("shared_reply_too_large");
    }
    // Bytes TLS already decrypted are not seen by poll.
    if (!(tls_ && SSL_pending(tls_->ssl) > 0)) {
      pollfd p{.fd = fd_, .events = POLLIN, .revents = 0};
      const int ready = poll(&p, 1, RemainingMs(until));
      if (ready == 0) return std::optional<RedisReply>();
      if (ready < 0) {
        if (errno == EINTR) continue;
        return Broken(std::string("poll: ") + std::strerror(errno));
      }
    }
    KILN_ASSIGN_OR_RETURN(size_t n, ReadSome(buffer.data(), buffer.size(), Clock::now() + options_.command_timeout));
    received_.append(buffer.data(), n);
  }
}

Result<RedisReply> RedisConnection::Run(const Command& command) {
  KILN_ASSIGN_OR_RETURN(std::vector<RedisReply> replies, Pipeline({command}));
  return std::move(replies.front());
}

}  // namespace kiln::cache::shared
