// A second process on a shared Redis store: the child of the Redis cache's multi-process tests. The steps are
// `RedisWorker` (NetworkAgentToolSupport), which the `redis_coalesce` benchmark's workers run too; this one sends on
// the test run's transport (`NETWORKAGENT_TEST_TRANSPORT`, inherited from the test process).
//
// Usage: RedisCacheWorker <redis URL> <key prefix> <resource URL> <requests> <clock offset in seconds> [<barrier>]
import Foundation
import NetworkAgentTestSupport
import NetworkAgentToolSupport

exit(await RedisWorker.main(Array(CommandLine.arguments.dropFirst()), agent: TestTransport.agent()))
