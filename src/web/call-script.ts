/**
 * The call page's script (/pages/call.js, web/call-page.ts), kept as text like the other pages'
 * assets (the build copies only .ts output). It speaks only to this origin's API with the session
 * cookie (X-CSRF-Token from /api/web/session on every change; no token is ever stored), to the
 * gateway for call.incoming/answered/ended, and to the signaling socket named by the ticket.
 *
 * WebRTC: one RTCPeerConnection per peer of the room. A peer already in the room offers to a
 * newcomer (peer-joined); the newcomer answers. `?relay=1` forces iceTransportPolicy "relay";
 * `?video=low` asks the camera for 160×120 at 10 fps.
 * window.ternCall is the page's diagnostics handle: its state and report() (connection state,
 * frames decoded and the selected candidate pair per peer).
 */
export const CALL_JS = `
(function () {
  'use strict';
  var root = document.getElementById('call');
  if (!root || !window.fetch || !window.WebSocket) return;
  var V2 = '/api.v2/api';
  var query = new URLSearchParams(location.search);
  var relay = query.get('relay') === '1';
  // ?video=low: a data saver (and what the browser tests use on a loaded machine)
  var camera = query.get('video') === 'low' ? { width: 160, height: 120, frameRate: 10 } : { width: { ideal: 640 }, height: { ideal: 360 }, frameRate: { ideal: 24 } };
  var state = { me: null, csrf: '', call: null, answering: false, room: null, roomIsCall: false, signal: null, peerId: null, peers: new Map(), local: null, ice: null };
  window.ternCall = state;
  var $ = function (id) { return document.getElementById(id); };
  // the tiles side by side (style properties set from script are allowed by the CSP; style attributes are not)
  var tiles = $('call-videos').style;
  tiles.display = 'flex';
  tiles.flexWrap = 'wrap';
  tiles.gap = '1rem';

  function say(text) { $('call-status').textContent = text; }
  function note(text) {
    var li = document.createElement('li');
    li.textContent = text;
    $('call-log').append(li);
  }
  function api(method, path, body) {
    return fetch(V2 + path, {
      method: method,
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': state.csrf },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(function (res) {
      return res.json().catch(function () { return null; }).then(function (json) {
        if (!res.ok || !json || !json.success) {
          var error = new Error(json && json.error ? json.error.message : 'HTTP ' + res.status);
          error.code = json && json.error ? json.error.code : 'http_' + res.status;
          throw error;
        }
        return json.data;
      });
    });
  }
  function failed(what) {
    return function (error) { say(what + ': ' + error.message); note(what + ' failed: ' + (error.code || '') + ' ' + error.message); };
  }

  // ---- the gateway: call events
  function connectGateway() {
    var ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + V2 + '/ws');
    ws.onopen = function () { root.dataset.gateway = 'open'; };
    ws.onclose = function () { root.dataset.gateway = 'closed'; setTimeout(connectGateway, 2000); };
    ws.onmessage = function (event) {
      var frame;
      try { frame = JSON.parse(event.data); } catch (e) { return; }
      if (frame && frame.data && frame.data.call) onCall(frame.type, frame.data.call);
    };
  }

  function showIncoming(call) {
    var box = $('call-incoming');
    box.querySelector('.incoming-text').textContent = 'Incoming ' + call.call_type + ' call from ' + call.caller.username;
    box.hidden = false;
  }

  function onCall(type, call) {
    var mine = state.call && state.call.call_id === call.call_id;
    if (type === 'call.incoming') {
      note('call.incoming ' + call.call_id);
      state.call = call;
      if (call.receiver_id === state.me.id) { showIncoming(call); say('Ringing: ' + call.caller.username + ' is calling'); }
      else say('Calling ' + call.receiver.username + '…');
      $('call-hangup').hidden = false;
      return;
    }
    if (!mine) {
      // a call that never rang here: someone tried while this user was busy
      if (type === 'call.ended' && call.status === 'missed' && call.receiver_id === state.me.id) note('Missed call from ' + call.caller.username + ' while busy');
      return;
    }
    state.call = call;
    if (type === 'call.answered') {
      note('call.answered ' + call.call_id);
      $('call-incoming').hidden = true;
      if (call.caller_id === state.me.id) { say('Answered: connecting…'); joinCall(call.call_id); }
      else if (!state.answering) say('Answered on another device');
      return;
    }
    if (type === 'call.ended') {
      note('call.ended ' + call.call_id + ' ' + call.status);
      $('call-incoming').hidden = true;
      say('Call ' + call.status);
      if (state.roomIsCall) leaveSignal();
      state.call = null;
      state.answering = false;
      $('call-hangup').hidden = true;
    }
  }

  function joinCall(id) {
    return api('POST', '/calls/' + id + '/ticket', { audio_only: false }).then(function (ticket) {
      state.roomIsCall = true;
      return openSignal(ticket);
    }).catch(failed('Joining the call'));
  }

  // ---- signaling and the peer connections
  function openSignal(ticket) {
    leaveSignal();
    state.room = ticket.room_id;
    state.ice = { iceServers: ticket.ice.ice_servers, iceTransportPolicy: relay ? 'relay' : 'all' };
    var media = state.local ? Promise.resolve(state.local) : navigator.mediaDevices.getUserMedia({ audio: true, video: camera });
    return media.then(function (stream) {
      state.local = stream;
      $('call-local').srcObject = stream;
      var ws = new WebSocket(ticket.signaling_url);
      var chain = Promise.resolve();
      state.signal = ws;
      ws.onopen = function () { ws.send(JSON.stringify({ type: 'join', room_id: ticket.room_id, ticket: ticket.ticket })); };
      ws.onmessage = function (event) {
        var frame;
        try { frame = JSON.parse(event.data); } catch (e) { return; }
        chain = chain.then(function () { return onSignal(frame); }).catch(function (error) { note('signal ' + frame.type + ' failed: ' + error.message); });
      };
      ws.onclose = function (event) {
        if (state.signal !== ws) return;
        state.signal = null;
        root.dataset.signal = 'closed';
        note('signaling closed ' + event.code);
        closePeers();
      };
    });
  }

  function sendSignal(frame) {
    if (state.signal && state.signal.readyState === WebSocket.OPEN) state.signal.send(JSON.stringify(frame));
  }

  function onSignal(frame) {
    switch (frame.type) {
      case 'joined':
        state.peerId = frame.peer_id;
        root.dataset.signal = 'joined';
        root.dataset.room = frame.room_id;
        note('joined ' + frame.room_id + ' with ' + frame.peers.length + ' peers');
        say(frame.peers.length ? 'In the room: connecting…' : 'In the room: waiting for others…');
        frame.peers.forEach(function (peer) { ensurePeer(peer.peer_id, peer.user_id, peer.username); });
        return;
      case 'peer-joined': {
        note('peer-joined ' + frame.peer.user_id);
        var p = ensurePeer(frame.peer.peer_id, frame.peer.user_id, frame.peer.username);
        return p.pc.createOffer().then(function (offer) { return p.pc.setLocalDescription(offer); }).then(function () {
          sendSignal({ type: 'offer', to: p.id, sdp: p.pc.localDescription.sdp });
        });
      }
      case 'offer': {
        var q = ensurePeer(frame.from, frame.from_user_id, '');
        return q.pc.setRemoteDescription({ type: 'offer', sdp: frame.sdp }).then(function () { return flush(q); })
          .then(function () { return q.pc.createAnswer(); })
          .then(function (answer) { return q.pc.setLocalDescription(answer); })
          .then(function () { sendSignal({ type: 'answer', to: q.id, sdp: q.pc.localDescription.sdp }); });
      }
      case 'answer': {
        var a = state.peers.get(frame.from);
        if (!a) return;
        return a.pc.setRemoteDescription({ type: 'answer', sdp: frame.sdp }).then(function () { return flush(a); });
      }
      case 'ice-candidate': {
        var c = state.peers.get(frame.from);
        if (!c || !frame.candidate) return;
        if (!c.pc.remoteDescription) { c.pending.push(frame.candidate); return; }
        return c.pc.addIceCandidate(frame.candidate);
      }
      case 'peer-left':
        note('peer-left ' + frame.user_id);
        closePeer(frame.peer_id);
        return;
      case 'error':
        note('signaling error ' + frame.code + ': ' + frame.message);
        return;
    }
  }

  function flush(p) {
    var pending = p.pending.splice(0);
    return Promise.all(pending.map(function (candidate) { return p.pc.addIceCandidate(candidate); }));
  }

  function ensurePeer(id, userId, username) {
    var existing = state.peers.get(id);
    if (existing) return existing;
    var pc = new RTCPeerConnection(state.ice);
    var figure = document.createElement('figure');
    var video = document.createElement('video');
    var caption = document.createElement('figcaption');
    video.autoplay = true;
    video.playsInline = true;
    video.muted = true;
    figure.dataset.peer = id;
    figure.dataset.user = String(userId);
    figure.dataset.state = 'new';
    figure.append(video, caption);
    $('call-videos').append(figure);
    var p = { id: id, userId: userId, username: username, pc: pc, pending: [], figure: figure };
    var show = function () {
      figure.dataset.state = pc.connectionState;
      caption.textContent = (p.username || 'user ' + userId) + ': ' + pc.connectionState;
      var connected = Array.from(state.peers.values()).filter(function (q) { return q.pc.connectionState === 'connected'; }).length;
      if (connected) say('Connected with ' + connected + (connected === 1 ? ' person' : ' people'));
    };
    show();
    state.local.getTracks().forEach(function (track) { pc.addTrack(track, state.local); });
    pc.onicecandidate = function (event) {
      sendSignal({ type: 'ice-candidate', to: id, candidate: event.candidate ? event.candidate.toJSON() : null });
    };
    pc.ontrack = function (event) { video.srcObject = event.streams[0] || new MediaStream([event.track]); };
    pc.onconnectionstatechange = show;
    state.peers.set(id, p);
    return p;
  }

  function closePeer(id) {
    var p = state.peers.get(id);
    if (!p) return;
    state.peers.delete(id);
    p.pc.close();
    p.figure.remove();
  }
  function closePeers() { Array.from(state.peers.keys()).forEach(closePeer); }

  function leaveSignal() {
    var ws = state.signal;
    state.signal = null;
    closePeers();
    if (ws) {
      if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: 'leave' }));
      ws.close();
      root.dataset.signal = 'closed';
    }
  }

  /** per peer: connection state, video frames decoded, and the selected candidate pair's types */
  state.report = function () {
    return Promise.all(Array.from(state.peers.values()).map(function (p) {
      return p.pc.getStats().then(function (stats) {
        var byId = new Map();
        var frames = 0;
        var pair = null;
        stats.forEach(function (s) { byId.set(s.id, s); });
        stats.forEach(function (s) {
          if (s.type === 'inbound-rtp' && s.kind === 'video') frames += s.framesDecoded || 0;
          if (s.type === 'transport' && s.selectedCandidatePairId) pair = byId.get(s.selectedCandidatePairId) || pair;
        });
        var local = pair && byId.get(pair.localCandidateId);
        var remote = pair && byId.get(pair.remoteCandidateId);
        return {
          peer_id: p.id, user_id: p.userId, state: p.pc.connectionState, framesDecoded: frames,
          local: local ? local.candidateType : null, remote: remote ? remote.candidateType : null,
        };
      });
    }));
  };

  // ---- the controls
  $('call-start').addEventListener('submit', function (event) {
    event.preventDefault();
    var form = event.target;
    var id = Number(form.elements.receiver_id.value);
    if (!Number.isSafeInteger(id) || id <= 0) return say('A user id is a positive number');
    say('Calling…');
    api('POST', '/calls/start', { receiver_id: id, call_type: form.elements.audio_only.checked ? 'audio' : 'video' })
      .then(function (call) { state.call = call; $('call-hangup').hidden = false; })
      .catch(function (error) {
        say(error.code === 'conflict' && /busy/.test(error.message) ? 'Busy: ' + error.message : 'Not called: ' + error.message);
        note('call refused: ' + error.code);
      });
  });
  $('call-answer').addEventListener('click', function () {
    if (!state.call) return;
    var id = state.call.call_id;
    state.answering = true;
    $('call-incoming').hidden = true;
    api('POST', '/calls/' + id + '/answer', {}).then(function () { say('Answered: connecting…'); return joinCall(id); })
      .catch(function (error) { state.answering = false; failed('Answering')(error); });
  });
  $('call-decline').addEventListener('click', function () {
    if (!state.call) return;
    $('call-incoming').hidden = true;
    api('POST', '/calls/' + state.call.call_id + '/end', {}).catch(failed('Declining'));
  });
  $('call-hangup').addEventListener('click', function () {
    if (state.call) api('POST', '/calls/' + state.call.call_id + '/end', {}).catch(failed('Hanging up'));
    else if (state.room && !state.roomIsCall) {
      var room = state.room;
      state.room = null;
      // the record first (it also closes this user's signaling sockets in the room), then the socket
      api('POST', '/calls/rooms/' + encodeURIComponent(room) + '/leave', {}).catch(failed('Leaving')).then(leaveSignal);
      $('call-hangup').hidden = true;
      say('Left the room');
    }
  });
  $('room-join').addEventListener('submit', function (event) {
    event.preventDefault();
    var room = event.target.elements.room_id.value.trim();
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(room)) return say('That is not a room id');
    api('POST', '/calls/rooms/' + encodeURIComponent(room) + '/join', {}).then(function (ticket) {
      state.roomIsCall = false;
      $('call-hangup').hidden = false;
      return openSignal(ticket);
    }).catch(failed('Joining the room'));
  });
  $('room-create').addEventListener('click', function () {
    api('POST', '/calls/rooms', { call_type: 'video' }).then(function (room) {
      $('room-join').elements.room_id.value = room.room_id;
      say('Room ' + room.room_id + ' created: join it, and share its id');
    }).catch(failed('Creating a room'));
  });

  fetch('/api/web/session', { credentials: 'same-origin' }).then(function (res) {
    if (!res.ok) throw new Error('not signed in');
    return res.json();
  }).then(function (json) {
    state.me = json.data.user;
    state.csrf = json.data.csrf_token;
    root.dataset.user = String(state.me.id);
    say('Signed in as ' + state.me.username + '. Call someone or join a room.');
    connectGateway();
    fromApp();
  }).catch(function () { location.assign('/login?next=' + encodeURIComponent(location.pathname + location.search)); });

  // Opened from the web app: ?to=<user id>&start=1 calls that user (audio=1: a voice call);
  // ?answer=<call id> answers that ringing call. Ids only: anything else in the query is ignored.
  function fromApp() {
    var to = Number(query.get('to'));
    var answer = Number(query.get('answer'));
    if (Number.isSafeInteger(to) && to > 0) {
      var form = $('call-start');
      form.elements.receiver_id.value = String(to);
      form.elements.audio_only.checked = query.get('audio') === '1';
      if (query.get('start') === '1') form.requestSubmit();
    } else if (Number.isSafeInteger(answer) && answer > 0) {
      api('GET', '/calls/' + answer).then(function (call) {
        if (call.status !== 'ringing' || call.receiver_id !== state.me.id) return say('That call is ' + call.status);
        state.call = call;
        $('call-hangup').hidden = false;
        $('call-answer').click();
      }).catch(failed('Answering'));
    }
  }
})();
`
