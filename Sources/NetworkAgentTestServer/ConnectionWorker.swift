import Foundation

/// Serves the requests of one accepted TCP connection, on that connection's own thread, with blocking I/O.
struct ConnectionWorker {
    let core: ServerCore
    let fd: Int32
    let connectionID: Int

    private static let continueResponse = Data("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// Loops over requests until the peer closes, a response closes the connection, or the server stops.
    func run() {
        var reader = SocketReader(fd: fd)
        var disposition = ConnectionDisposition.keepAlive
        while disposition == .keepAlive && !core.isStopped {
            disposition = serveOneRequest(&reader)
        }
        if disposition == .drainAndClose {
            drain()
        }
        core.finishConnection(connectionID, fd: fd, reset: disposition == .reset)
    }

    private func serveOneRequest(_ reader: inout SocketReader) -> ConnectionDisposition {
        let headBytes: [UInt8]
        do {
            guard let bytes = try reader.readHead(limit: HTTPRequestParser.maximumHeadBytes) else { return .close }
            headBytes = bytes
        } catch .limitExceeded {
            return reject(RequestRejection(status: 431, reason: "request head larger than 64 KiB"))
        } catch {
            return .close
        }

        let head: RequestHead
        let framing: BodyFraming
        do {
            head = try HTTPRequestParser.parseHead(headBytes)
            framing = try HTTPRequestParser.bodyFraming(of: head)
        } catch {
            return reject(error)
        }

        if head.expectsContinue && framing.hasBody {
            guard Socket.sendAll(fd, Self.continueResponse) else { return .close }
        }
        let body: Data
        do {
            body = try HTTPRequestParser.readBody(framing, from: &reader)
        } catch let rejection as RequestRejection {
            return reject(rejection)
        } catch {
            return .close
        }

        let request = ServerRequest(
            method: head.method,
            target: head.target,
            headers: head.headers,
            body: body,
            isChunked: framing == .chunked,
            connectionID: connectionID
        )
        let response = core.handle(request)
        guard !core.isStopped else { return .close }
        let context = ResponseWriter.Context(
            isHead: head.method == "HEAD",
            closeAfter: core.closesConnections || head.wantsClose || HTTPRequestParser.hasConflictingFraming(head),
            isHTTP10: head.minorVersion == 0
        )
        return ResponseWriter(fd: fd, core: core).write(response, context: context)
    }

    private func reject(_ rejection: RequestRejection) -> ConnectionDisposition {
        let response = ResponseWriter.errorResponse(status: rejection.status, message: rejection.reason)
        return Socket.sendAll(fd, response) ? .drainAndClose : .close
    }

    /// Sends FIN, then discards what the client still sends for up to 250 ms (or 1 MiB), so that closing does not
    /// reset the connection before the client has read the error response.
    private func drain() {
        Socket.shutdownWrite(fd)
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(250))
        var discarded = 0
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while discarded < 1024 * 1024 && clock.now < deadline && !core.isStopped {
            switch Socket.waitReadable(fd, milliseconds: 20) {
            case .timeout: continue
            case .failure: return
            case .readable: break
            }
            let result = scratch.withUnsafeMutableBytes { Socket.receive(fd, into: $0) }
            guard case .bytes(let count) = result else { return }
            discarded += count
        }
    }
}
