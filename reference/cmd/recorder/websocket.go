package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// wsFrame is one WebSocket frame as it arrived, at its time since the
// request.
type wsFrame struct {
	at      time.Duration
	opcode  byte
	fin     bool
	payload []byte
}

// WebSocket opcodes (RFC 6455 section 5.2).
const (
	opText  = 1
	opClose = 8
)

// websocket opens a watch as a WebSocket (RFC 6455, written by hand like
// the rest of the recorder) and records every frame until the server
// closes, or until closeAfter, when the recorder sends close(1000) and
// reads the server's answer. during runs while it is open.
func (t target) websocket(ctx context.Context, path string, headers map[string]string,
	closeAfter, maxWait time.Duration, during func() error) (*response, error) {
	key := make([]byte, 16)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("websocket key: %w", err)
	}
	h := map[string]string{"Upgrade": "websocket", "Connection": "Upgrade", "Accept": "",
		"Sec-WebSocket-Key": base64.StdEncoding.EncodeToString(key), "Sec-WebSocket-Version": "13",
		"Origin": "http://localhost"}
	for k, v := range headers {
		h[k] = v
	}
	d := tls.Dialer{Config: t.tls}
	conn, err := d.DialContext(ctx, "tcp", t.addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", t.addr, err)
	}
	defer conn.Close()
	r := &response{sent: time.Now()}
	_ = conn.SetReadDeadline(r.sent.Add(maxWait))
	if _, err := conn.Write(t.requestBytes("GET", path, h, "")); err != nil {
		return nil, fmt.Errorf("send: %w", err)
	}
	br := bufio.NewReader(conn)
	if err := r.readHead(br); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(r.status, "101") {
		return r, r.readBody(br)
	}
	done := make(chan error, 1)
	go func() { done <- r.readFrames(br) }()
	var duringErr error
	if during != nil {
		duringErr = during()
	}
	timer := time.NewTimer(time.Until(r.sent.Add(closeAfter)))
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		if _, werr := conn.Write(clientFrame(opClose, []byte{0x03, 0xe8})); werr != nil {
			return nil, fmt.Errorf("send close: %w", werr)
		}
		err = <-done
		r.ended = fmt.Sprintf("client sent close(1000) after %.0fs, server answered with its close frame", closeAfter.Seconds())
	case <-ctx.Done():
		conn.Close()
		<-done
		err = ctx.Err()
	}
	return r, errors.Join(err, duringErr)
}

// readFrames reads server frames until a close frame (or the read
// deadline); the body is the text messages, concatenated.
func (r *response) readFrames(br *bufio.Reader) error {
	for {
		f, err := readFrame(br)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				r.ended = fmt.Sprintf("recorder stopped reading after %.3fs (still open)", time.Since(r.sent).Seconds())
				return nil
			}
			return fmt.Errorf("websocket frame: %w", err)
		}
		f.at = time.Since(r.sent)
		r.frames = append(r.frames, f)
		switch f.opcode {
		case opText:
			r.body = append(r.body, f.payload...)
		case opClose:
			r.ended = "server sent close frame"
			return nil
		}
	}
}

func readFrame(br *bufio.Reader) (wsFrame, error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil {
		return wsFrame{}, err
	}
	f := wsFrame{fin: h[0]&0x80 != 0, opcode: h[0] & 0x0f}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var ext [2]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return f, err
		}
		n = uint64(binary.BigEndian.Uint16(ext[:]))
	case 127:
		var ext [8]byte
		if _, err := io.ReadFull(br, ext[:]); err != nil {
			return f, err
		}
		n = binary.BigEndian.Uint64(ext[:])
	}
	var mask [4]byte
	masked := h[1]&0x80 != 0
	if masked {
		if _, err := io.ReadFull(br, mask[:]); err != nil {
			return f, err
		}
	}
	if n > 64<<20 {
		return f, fmt.Errorf("frame of %d bytes", n)
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(br, f.payload); err != nil {
		return f, err
	}
	if masked {
		for i := range f.payload {
			f.payload[i] ^= mask[i%4]
		}
	}
	return f, nil
}

// clientFrame is one short frame from the client, masked as RFC 6455
// requires of every client frame.
func clientFrame(opcode byte, payload []byte) []byte {
	var mask [4]byte
	_, _ = rand.Read(mask[:])
	b := []byte{0x80 | opcode, 0x80 | byte(len(payload))}
	b = append(b, mask[:]...)
	for i, c := range payload {
		b = append(b, c^mask[i%4])
	}
	return b
}

// describeFrame is one line of a WebSocket entry's frame list.
func describeFrame(f wsFrame) string {
	fin := 0
	if f.fin {
		fin = 1
	}
	switch f.opcode {
	case opText:
		nl := "does not end with \\n"
		if strings.HasSuffix(string(f.payload), "\n") {
			nl = "ends with \\n"
		}
		return fmt.Sprintf("TEXT frame, FIN=%d, payload %d bytes (%s) = %s", fin, len(f.payload), nl,
			strings.TrimPrefix(describeChunk(f.payload), fmt.Sprintf("chunk of %d bytes = ", len(f.payload))))
	case opClose:
		code, reason := 0, ""
		if len(f.payload) >= 2 {
			code, reason = int(binary.BigEndian.Uint16(f.payload)), string(f.payload[2:])
		}
		return fmt.Sprintf("CLOSE frame from server, status code %d, reason '%s'", code, reason)
	}
	return fmt.Sprintf("frame opcode %d, FIN=%d, payload %d bytes", f.opcode, fin, len(f.payload))
}
