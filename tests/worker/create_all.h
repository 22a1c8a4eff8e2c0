#ifndef RINGLEADER_TESTS_WORKER_CREATE_ALL_H_
#define RINGLEADER_TESTS_WORKER_CREATE_ALL_H_

#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "worker/comm/kv_client.h"

namespace ringleader::testing {

// Creates the `world` ranks' communicators of one type concurrently (Create
// blocks until every rank is there), each over the same KV store.
template <typename C>
std::vector<std::unique_ptr<C>> CreateAll(KvClient* kv, int world,
                                          const typename C::Options& options) {
  std::vector<std::unique_ptr<C>> comms(world);
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    threads.emplace_back([&, r] {
      auto c = C::Create(kv, r, world, options);
      ASSERT_TRUE(c.ok()) << c.status();
      comms[r] = *std::move(c);
    });
  }
  for (auto& t : threads) t.join();
  return comms;
}

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_WORKER_CREATE_ALL_H_
