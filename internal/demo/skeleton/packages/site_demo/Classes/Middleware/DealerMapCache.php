<?php

declare(strict_types=1);

namespace Nordlicht\SiteDemo\Middleware;

use Psr\Http\Message\ResponseInterface;
use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Server\MiddlewareInterface;
use Psr\Http\Server\RequestHandlerInterface;

/**
 * Lets browsers cache the dealer map's JSON for an hour.
 */
final class DealerMapCache implements MiddlewareInterface
{
    public function process(ServerRequestInterface $request, RequestHandlerInterface $handler): ResponseInterface
    {
        $response = $handler->handle($request);
        if (str_starts_with($request->getUri()->getPath(), '/dealers.json')) {
            return $response->withHeader('Cache-Control', 'public, max-age=3600');
        }
        return $response;
    }
}
