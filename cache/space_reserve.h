// Room kept free for deletes on a full disk.
//
// SQLite needs free space to delete: the pages a delete changes go to the
// write-ahead log first. A SpaceReserve is a file of `bytes` beside the
// database, written (so its blocks are really allocated, not sparse) while
// there is room; when a delete fails because the disk is full, the store
// releases (deletes) it and retries, then refills it once a later write
// finds room again. The file is written through the database's own SQLite
// VFS, so it takes room wherever the database does. Any process using the
// store may release or refill it: the file, not this object, says whether
// it is held.
//
// Thread-compatible: the store calls it under its writer lock.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace kiln::cache {

class SpaceReserve {
 public:
  // `vfs` must outlive this object (a registered VFS does). `bytes` == 0:
  // no reserve (Refill succeeds, Release frees nothing).
  SpaceReserve(std::string path, uint64_t bytes, sqlite3_vfs* vfs)
      : path_(std::move(path)), bytes_(bytes), vfs_(vfs) {}

  // Makes the file `bytes` long. False when the disk has no room (the file
  // is then removed, giving back what it took) or the file cannot be made.
  bool Refill();
  // Deletes the file; true when it held any room to give back.
  bool Release();
  // Whether the file is there at full size.
  bool Held() const;

  const std::string& path() const { return path_; }
  uint64_t bytes() const { return bytes_; }

 private:
  int64_t Size() const;  // -1 when absent

  std::string path_;
  uint64_t bytes_;
  sqlite3_vfs* vfs_;
};

}  // namespace kiln::cache
