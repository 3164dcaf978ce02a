#include "server/http/port_holder.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string_view>

#include "base/str_cat.h"

namespace kiln::http::internal {
namespace {

constexpr std::string_view kListenState = "0A";  // TCP_LISTEN in /proc/net/tcp
constexpr size_t kMaxCommandBytes = 160;

// Socket inodes of the sockets listening on `port` in one /proc/net table:
// lines "sl local_address rem_address st ... inode", the local address as
// HEX_ADDRESS:HEX_PORT.
void AddListeningInodes(const char* table, uint16_t port, std::set<std::string>& inodes) {
  std::ifstream in(table);
  std::string line;
  std::getline(in, line);  // the column titles
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
    if (!(fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >>
          timeout >> inode)) {
      continue;
    }
    size_t colon = local.rfind(':');
    if (state != kListenState || colon == std::string::npos) continue;
    if (std::strtoul(local.c_str() + colon + 1, nullptr, 16) == port) inodes.insert(inode);
  }
}

// The command line of `pid`, its arguments joined by spaces, shortened.
std::string CommandOf(const std::string& pid) {
  std::ifstream in("/proc/" + pid + "/cmdline", std::ios::binary);
  std::string command((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!command.empty() && command.back() == '\0') command.pop_back();
  for (char& c : command) c = c == '\0' ? ' ' : c;
  if (command.size() > kMaxCommandBytes) command = command.substr(0, kMaxCommandBytes) + "...";
  return command;
}

// The first process with an open descriptor on one of `inodes`.
std::optional<std::string> OwnerOf(const std::set<std::string>& inodes) {
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return std::nullopt;
  std::optional<std::string> owner;
  while (!owner) {
    dirent* entry = readdir(proc);
    if (entry == nullptr) break;
    std::string pid = entry->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string fd_dir = "/proc/" + pid + "/fd";
    DIR* fds = opendir(fd_dir.c_str());
    if (fds == nullptr) continue;  // another user's process
    while (dirent* fd = readdir(fds)) {
      char target[64];
      std::string link = fd_dir + "/" + fd->d_name;
      ssize_t length = readlink(link.c_str(), target, sizeof(target) - 1);
      if (length <= 0) continue;
      std::string_view name(target, static_cast<size_t>(length));
      if (!name.starts_with("socket:[") || !name.ends_with("]")) continue;
      if (inodes.contains(std::string(name.substr(8, name.size() - 9)))) {
        owner = StrCat("pid ", pid, " (", CommandOf(pid), ")");
        break;
      }
    }
    closedir(fds);
  }
  closedir(proc);
  return owner;
}

}  // namespace

std::optional<std::string> DescribePortHolder(uint16_t port) {
  std::set<std::string> inodes;
  AddListeningInodes("/proc/net/tcp", port, inodes);
  AddListeningInodes("/proc/net/tcp6", port, inodes);
  inodes.erase("0");  // a socket whose inode the kernel hides
  if (inodes.empty()) return std::nullopt;
  if (std::optional<std::string> owner = OwnerOf(inodes)) return owner;
  return "a process of another user";
}

}  // namespace kiln::http::internal
