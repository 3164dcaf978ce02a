// A SQLite VFS for tests that simulates a small file system, without root
// or a real full disk: it is the default VFS, except that a write (or
// truncate) that grows a file fails with SQLITE_FULL when the regular
// files in that file's directory would then total more than the quota. That
// is what SQLite's unix VFS answers for ENOSPC, at the same places: the
// database, its write-ahead log and its journal. Files written without the
// VFS (the store's space reserve) count too, as on a real disk; the -shm
// file, which SQLite sizes itself, counts but is never refused.
//
// Use: RegisterQuotaVfs() once, open "file:/dir/cache.db?vfs=kiln-quota",
// then SetQuotaBytes(DirectoryBytes("/dir")) to make the disk full now.
// The quota is process-wide (0: none). Header-only; thread-safe.
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

namespace kiln::cache::testing {

inline constexpr const char* kQuotaVfsName = "kiln-quota";

namespace quota_vfs_internal {

inline std::atomic<uint64_t>& Quota() {
  static std::atomic<uint64_t> quota{0};
  return quota;
}

inline sqlite3_vfs*& Root() {
  static sqlite3_vfs* root = nullptr;
  return root;
}

// Our file, followed in memory by the default VFS's file it wraps.
struct File {
  sqlite3_file base;
  char dir[1024];
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};

inline File* Of(sqlite3_file* file) { return reinterpret_cast<File*>(file); }

inline uint64_t DirectoryBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.is_regular_file(error)) total += entry.file_size(error);
  }
  return total;
}

// Whether growing `file` to `new_size` bytes stays within the quota.
inline bool Fits(File* file, sqlite3_int64 new_size) {
  const uint64_t quota = Quota().load();
  if (quota == 0 || file->dir[0] == '\0') return true;
  sqlite3_int64 size = 0;
  if (file->real()->pMethods->xFileSize(file->real(), &size) != SQLITE_OK || new_size <= size) return true;
  return DirectoryBytes(file->dir) + static_cast<uint64_t>(new_size - size) <= quota;
}

inline int Close(sqlite3_file* f) { return Of(f)->real()->pMethods->xClose(Of(f)->real()); }
inline int Read(sqlite3_file* f, void* data, int amount, sqlite3_int64 offset) {
  return Of(f)->real()->pMethods->xRead(Of(f)->real(), data, amount, offset);
}
inline int Write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  if (!Fits(Of(f), offset + amount)) return SQLITE_FULL;
  return Of(f)->real()->pMethods->xWrite(Of(f)->real(), data, amount, offset);
}
inline int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  if (!Fits(Of(f), size)) return SQLITE_FULL;
  return Of(f)->real()->pMethods->xTruncate(Of(f)->real(), size);
}
inline int Sync(sqlite3_file* f, int flags) { return Of(f)->real()->pMethods->xSync(Of(f)->real(), flags); }
inline int FileSize(sqlite3_file* f, sqlite3_int64* size) {
  return Of(f)->real()->pMethods->xFileSize(Of(f)->real(), size);
}
inline int Lock(sqlite3_file* f, int level) { return Of(f)->real()->pMethods->xLock(Of(f)->real(), level); }
inline int Unlock(sqlite3_file* f, int level) { return Of(f)->real()->pMethods->xUnlock(Of(f)->real(), level); }
inline int CheckReservedLock(sqlite3_file* f, int* out) {
  return Of(f)->real()->pMethods->xCheckReservedLock(Of(f)->real(), out);
}
inline int FileControl(sqlite3_file* f, int op, void* arg) {
  if (op == SQLITE_FCNTL_SIZE_HINT && !Fits(Of(f), *static_cast<sqlite3_int64*>(arg))) return SQLITE_FULL;
  return Of(f)->real()->pMethods->xFileControl(Of(f)->real(), op, arg);
}
inline int SectorSize(sqlite3_file* f) { return Of(f)->real()->pMethods->xSectorSize(Of(f)->real()); }
inline int DeviceCharacteristics(sqlite3_file* f) {
  return Of(f)->real()->pMethods->xDeviceCharacteristics(Of(f)->real());
}
inline int ShmMap(sqlite3_file* f, int region, int size, int extend, void volatile** out) {
  return Of(f)->real()->pMethods->xShmMap(Of(f)->real(), region, size, extend, out);
}
inline int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return Of(f)->real()->pMethods->xShmLock(Of(f)->real(), offset, n, flags);
}
inline void ShmBarrier(sqlite3_file* f) { Of(f)->real()->pMethods->xShmBarrier(Of(f)->real()); }
inline int ShmUnmap(sqlite3_file* f, int delete_flag) {
  return Of(f)->real()->pMethods->xShmUnmap(Of(f)->real(), delete_flag);
}
inline int Fetch(sqlite3_file* f, sqlite3_int64 offset, int amount, void** out) {
  return Of(f)->real()->pMethods->xFetch(Of(f)->real(), offset, amount, out);
}
inline int Unfetch(sqlite3_file* f, sqlite3_int64 offset, void* page) {
  return Of(f)->real()->pMethods->xUnfetch(Of(f)->real(), offset, page);
}

inline const sqlite3_io_methods kMethods = {
    3,        Close,       Read,    Write,     Truncate,   Sync,  FileSize, Lock, Unlock, CheckReservedLock,
    FileControl, SectorSize, DeviceCharacteristics, ShmMap, ShmLock, ShmBarrier, ShmUnmap, Fetch, Unfetch,
};

inline int Open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  File* ours = Of(file);
  std::memset(ours, 0, sizeof(File));
  const int rc = Root()->xOpen(Root(), name, ours->real(), flags, out_flags);
  if (rc != SQLITE_OK) {
    ours->base.pMethods = nullptr;  // SQLite calls no xClose
    return rc;
  }
  if (name != nullptr) {
    const std::string dir = std::filesystem::path(name).parent_path().string();
    std::strncpy(ours->dir, dir.c_str(), sizeof(ours->dir) - 1);
  }
  ours->base.pMethods = &kMethods;
  return SQLITE_OK;
}

inline int Delete(sqlite3_vfs*, const char* name, int sync_dir) { return Root()->xDelete(Root(), name, sync_dir); }
inline int Access(sqlite3_vfs*, const char* name, int flags, int* out) {
  return Root()->xAccess(Root(), name, flags, out);
}
inline int FullPathname(sqlite3_vfs*, const char* name, int size, char* out) {
  return Root()->xFullPathname(Root(), name, size, out);
}
inline void* DlOpen(sqlite3_vfs*, const char* name) { return Root()->xDlOpen(Root(), name); }
inline void DlError(sqlite3_vfs*, int size, char* out) { Root()->xDlError(Root(), size, out); }
inline void (*DlSym(sqlite3_vfs*, void* handle, const char* symbol))(void) {
  return Root()->xDlSym(Root(), handle, symbol);
}
inline void DlClose(sqlite3_vfs*, void* handle) { Root()->xDlClose(Root(), handle); }
inline int Randomness(sqlite3_vfs*, int size, char* out) { return Root()->xRandomness(Root(), size, out); }
inline int Sleep(sqlite3_vfs*, int micros) { return Root()->xSleep(Root(), micros); }
inline int CurrentTime(sqlite3_vfs*, double* out) { return Root()->xCurrentTime(Root(), out); }
inline int GetLastError(sqlite3_vfs*, int size, char* out) { return Root()->xGetLastError(Root(), size, out); }
inline int CurrentTimeInt64(sqlite3_vfs*, sqlite3_int64* out) { return Root()->xCurrentTimeInt64(Root(), out); }

}  // namespace quota_vfs_internal

// Registers the VFS (once; later calls do nothing).
inline void RegisterQuotaVfs() {
  namespace q = quota_vfs_internal;
  static sqlite3_vfs vfs{};  // SQLite keeps the pointer: static storage
  static const bool registered = [] {
    q::Root() = sqlite3_vfs_find(nullptr);
    vfs.iVersion = 2;
    vfs.szOsFile = static_cast<int>(sizeof(q::File)) + q::Root()->szOsFile;
    vfs.mxPathname = q::Root()->mxPathname;
    vfs.zName = kQuotaVfsName;
    vfs.xOpen = q::Open;
    vfs.xDelete = q::Delete;
    vfs.xAccess = q::Access;
    vfs.xFullPathname = q::FullPathname;
    vfs.xDlOpen = q::DlOpen;
    vfs.xDlError = q::DlError;
    vfs.xDlSym = q::DlSym;
    vfs.xDlClose = q::DlClose;
    vfs.xRandomness = q::Randomness;
    vfs.xSleep = q::Sleep;
    vfs.xCurrentTime = q::CurrentTime;
    vfs.xGetLastError = q::GetLastError;
    vfs.xCurrentTimeInt64 = q::CurrentTimeInt64;
    return sqlite3_vfs_register(&vfs, /*makeDflt=*/0) == SQLITE_OK;
  }();
  (void)registered;
}

// The quota of every directory written through the VFS; 0: none.
inline void SetQuotaBytes(uint64_t bytes) { quota_vfs_internal::Quota().store(bytes); }

// Bytes of the regular files directly in `dir`.
inline uint64_t DirectoryBytes(const std::string& dir) { return quota_vfs_internal::DirectoryBytes(dir); }

// "file:PATH?vfs=kiln-quota" (PATH must not need URI escaping).
inline std::string QuotaVfsUri(const std::string& path) { return "file:" + path + "?vfs=" + kQuotaVfsName; }

}  // namespace kiln::cache::testing
