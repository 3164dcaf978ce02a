#include "server/http/responder.h"

#include "server/http/content_coding.h"
#include "server/http/json_response.h"
#include "server/http/response_channel.h"

namespace kiln::http {

Responder::Responder(std::shared_ptr<internal::ResponseChannel> channel, ResponseTicket ticket)
    : channel_(std::move(channel)), ticket_(ticket) {}

Responder::Responder(Responder&& other) noexcept
    : channel_(std::move(other.channel_)), ticket_(other.ticket_) {}

Responder& Responder::operator=(Responder&& other) noexcept {
  if (this != &other) {
    if (channel_) (*this)(ErrorResponse(InternalError("handler dropped its request")));
    channel_ = std::move(other.channel_);
    ticket_ = other.ticket_;
  }
  return *this;
}

Responder::~Responder() {
  if (channel_) (*this)(ErrorResponse(InternalError("handler finished without a response")));
}

void Responder::operator()(Response response) {
  if (!channel_) return;
  std::shared_ptr<internal::ResponseChannel> channel = std::move(channel_);
  channel_ = nullptr;
  internal::Completion completion;
  completion.connection_id = ticket_.connection_id;
  completion.sequence = ticket_.sequence;
  completion.wire = ChooseWireBody(response, ticket_.accepts_zstd,
                                   /*compress_allowed=*/!ticket_.head, channel->policy());
  completion.response = std::move(response);
  channel->Post(std::move(completion));
}

}  // namespace kiln::http
