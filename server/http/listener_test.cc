#include "server/http/listener.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "server/http/listen_socket.h"
#include "server/http/testing/raw_http_client.h"

namespace kiln::http::internal {
namespace {

using namespace std::chrono_literals;
using testing::RawHttpClient;

// A Listener on 127.0.0.1 with its own loop, counting what it accepts.
class ListenerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(uv_loop_init(&loop_), 0);
    Result<sockaddr_storage> address = ResolveListenAddress("127.0.0.1", 0);
    ASSERT_TRUE(address);
    Result<uv_os_sock_t> socket =
        BindListenSocket(*reinterpret_cast<const sockaddr*>(&*address), ListenRole::kAlone);
    ASSERT_TRUE(socket) << socket.error().message;
    Status opened = listener_.Open(
        &loop_, *socket, 16,
        [this](uv_stream_t* server) {
          auto* tcp = new uv_tcp_t;
          uv_tcp_init(&loop_, tcp);
          if (uv_accept(server, reinterpret_cast<uv_stream_t*>(tcp)) == 0) ++accepted_;
          uv_close(reinterpret_cast<uv_handle_t*>(tcp),
                   [](uv_handle_t* handle) { delete reinterpret_cast<uv_tcp_t*>(handle); });
        },
        [](int) {});
    ASSERT_TRUE(opened) << opened.error().message;
  }
  void TearDown() override {
    listener_.Close();
    uv_run(&loop_, UV_RUN_DEFAULT);
    EXPECT_EQ(uv_loop_close(&loop_), 0);
  }

  // Runs the loop until `accepted_` reaches `count` (bounded); the count.
  int RunUntilAccepted(int count) {
    for (int i = 0; i < 500 && accepted_ < count; ++i) {
      uv_run(&loop_, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(2ms);
    }
    return accepted_;
  }
  // A few loop iterations, for what should not happen.
  void Spin() {
    for (int i = 0; i < 20; ++i) {
      uv_run(&loop_, UV_RUN_NOWAIT);
      std::this_thread::sleep_for(2ms);
    }
  }

  uv_loop_t loop_{};
  Listener listener_;
  int accepted_ = 0;
};

TEST_F(ListenerTest, AcceptsUntilPausedAndAgainWhenResumed) {
  Result<RawHttpClient> first = RawHttpClient::Connect(listener_.port());
  ASSERT_TRUE(first);
  EXPECT_EQ(RunUntilAccepted(1), 1);

  listener_.Pause(60s);  // only Resume can end it within the test
  EXPECT_TRUE(listener_.paused());
  Spin();  // the duplicate descriptor closes
  // The kernel still completes and queues the connection.
  Result<RawHttpClient> queued = RawHttpClient::Connect(listener_.port());
  ASSERT_TRUE(queued) << queued.error().message;
  Spin();
  EXPECT_EQ(accepted_, 1);

  listener_.Resume();
  EXPECT_FALSE(listener_.paused());
  EXPECT_EQ(RunUntilAccepted(2), 2);
}

TEST_F(ListenerTest, AResumeWhileTheOldHandleClosesTakesEffectOnceItHas) {
  listener_.Pause(60s);
  listener_.Resume();  // the duplicate is still closing
  Result<RawHttpClient> client = RawHttpClient::Connect(listener_.port());
  ASSERT_TRUE(client);
  EXPECT_EQ(RunUntilAccepted(1), 1);
  EXPECT_FALSE(listener_.paused());
}

TEST_F(ListenerTest, APauseEndsByItself) {
  listener_.Pause(20ms);
  Result<RawHttpClient> client = RawHttpClient::Connect(listener_.port());
  ASSERT_TRUE(client);
  EXPECT_EQ(RunUntilAccepted(1), 1);
  EXPECT_FALSE(listener_.paused());
}

TEST_F(ListenerTest, CloseFreesTheAddress) {
  const uint16_t port = listener_.port();
  listener_.Close();
  Spin();
  EXPECT_FALSE(RawHttpClient::Connect(port, 1s));
}

}  // namespace
}  // namespace kiln::http::internal
