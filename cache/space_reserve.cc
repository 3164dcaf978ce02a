#include "cache/space_reserve.h"

#include <algorithm>
#include <memory>
#include <string>

namespace kiln::cache {
namespace {

// A file of the VFS, closed on scope exit.
class VfsFile {
 public:
  VfsFile(sqlite3_vfs* vfs, const std::string& path, int flags)
      : storage_(new char[static_cast<size_t>(vfs->szOsFile)]()), file_(reinterpret_cast<sqlite3_file*>(storage_.get())) {
    // A super-journal is a plain file to every VFS: no locks, no WAL index.
    opened_ = vfs->xOpen(vfs, path.c_str(), file_, flags | SQLITE_OPEN_SUPER_JOURNAL, nullptr) == SQLITE_OK &&
              file_->pMethods != nullptr;
  }
  ~VfsFile() {
    if (opened_) file_->pMethods->xClose(file_);
  }
  bool opened() const { return opened_; }
  sqlite3_file* get() const { return file_; }

 private:
  std::unique_ptr<char[]> storage_;
  sqlite3_file* file_;
  bool opened_ = false;
};

}  // namespace

int64_t SpaceReserve::Size() const {
  int exists = 0;
  if (vfs_->xAccess(vfs_, path_.c_str(), SQLITE_ACCESS_EXISTS, &exists) != SQLITE_OK || exists == 0) return -1;
  VfsFile file(vfs_, path_, SQLITE_OPEN_READONLY);
  sqlite3_int64 size = -1;
  if (!file.opened() || file.get()->pMethods->xFileSize(file.get(), &size) != SQLITE_OK) return -1;
  return size;
}

bool SpaceReserve::Held() const { return bytes_ == 0 || Size() >= static_cast<int64_t>(bytes_); }

bool SpaceReserve::Refill() {
  if (Held()) return true;
  bool filled = false;
  {
    VfsFile file(vfs_, path_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (!file.opened()) return false;
    sqlite3_file* raw = file.get();
    // The blocks must really be taken, not a sparse promise: a size hint
    // with a chunk size makes the unix VFS fallocate them at once ...
    int chunk = static_cast<int>(std::min<uint64_t>(bytes_, 1u << 30));
    sqlite3_int64 hint = static_cast<sqlite3_int64>(bytes_);
    sqlite3_int64 size = 0;
    filled = raw->pMethods->xFileControl(raw, SQLITE_FCNTL_CHUNK_SIZE, &chunk) == SQLITE_OK &&
             raw->pMethods->xFileControl(raw, SQLITE_FCNTL_SIZE_HINT, &hint) == SQLITE_OK &&
             raw->pMethods->xFileSize(raw, &size) == SQLITE_OK;
    if (filled && size < hint) {
      // ... or, where the file system cannot fallocate, zeros.
      const std::string zeros(64 << 10, '\0');
      for (uint64_t offset = 0; filled && offset < bytes_; offset += zeros.size()) {
        const int amount = static_cast<int>(std::min<uint64_t>(zeros.size(), bytes_ - offset));
        filled = raw->pMethods->xWrite(raw, zeros.data(), amount, static_cast<sqlite3_int64>(offset)) == SQLITE_OK;
      }
    }
  }
  if (!filled) (void)vfs_->xDelete(vfs_, path_.c_str(), 0);
  return filled;
}

bool SpaceReserve::Release() {
  if (bytes_ == 0) return false;
  const int64_t size = Size();
  return size >= 0 && vfs_->xDelete(vfs_, path_.c_str(), 0) == SQLITE_OK && size > 0;
}

}  // namespace kiln::cache
