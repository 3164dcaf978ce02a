// kiln_cache_crash_writer DB ACK START: stores crash entries START, START+1,
// ... into the cache at DB until killed, each put and then swapped for its
// tuned bytes (ReplaceWithTuned). After both return it appends "<i>\n" to
// ACK and fsyncs it, so the crash test knows which writes must have
// survived. Exits 1 on any error.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "cache/cache_store.h"
#include "cache/checksum.h"
#include "cache/testing/crash_entries.h"

namespace {

bool WriteAll(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DB ACK START\n", argv[0]);
    return 1;
  }
  kiln::cache::CacheStoreOptions options;
  options.path = argv[1];
  auto store = kiln::cache::CacheStore::Open(std::move(options));
  if (!store) {
    std::fprintf(stderr, "open: %s\n", store.error().ToString().c_str());
    return 1;
  }
  int ack = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (ack < 0) {
    std::perror("open ack");
    return 1;
  }
  for (uint64_t i = std::strtoull(argv[3], nullptr, 10);; ++i) {
    const std::string bytes = kiln::cache::testing::CrashEntryBytes(i);
    kiln::cache::PutRequest request;
    request.id = kiln::cache::testing::CrashEntryId(i);
    request.executable = bytes;
    request.compile_seconds = 1.0 + static_cast<double>(i % 10);
    request.components = {{"entry body", request.id.key}};
    if (auto put = (*store)->Put(request); !put) {
      std::fprintf(stderr, "put %llu: %s\n", static_cast<unsigned long long>(i), put.error().message.c_str());
      return 1;
    }
    const std::string tuned = kiln::cache::testing::CrashEntryTunedBytes(i);
    const uint64_t started_from = kiln::cache::ExecutableChecksum(bytes);
    request.executable = tuned;
    request.plan_kind = kiln::cache::PlanKind::kTuned;
    if (auto swap = (*store)->ReplaceWithTuned(request, started_from); !swap) {
      std::fprintf(stderr, "swap %llu: %s\n", static_cast<unsigned long long>(i), swap.error().message.c_str());
      return 1;
    }
    if (!WriteAll(ack, std::to_string(i) + "\n") || fsync(ack) != 0) {
      std::perror("ack");
      return 1;
    }
  }
}
